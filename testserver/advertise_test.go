package testserver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestAdvertise: every answer, success or refusal, tells the quota in the
// family asked for, and clientcall.ParseAdvertised reads back the limit,
// what remains and when it is full again.
func TestAdvertise(t *testing.T) {
	families := []testserver.Advertise{testserver.AdvertiseIETF, testserver.AdvertiseDraft, testserver.AdvertiseX,
		testserver.AdvertiseOpenAI, testserver.AdvertiseAnthropic}
	for _, tc := range []struct {
		name     string
		cfg      testserver.Config
		requests int           // sent at the start, back to back
		later    time.Duration // then one more this much later, whose answer is read
		limit    int64         // advertised limit (window families) and
		capacity int64         // capacity (bucket families)
		remain   int64
		reset    time.Duration // from the last request
		status   int
	}{
		{"fixed window", testserver.Config{Mode: testserver.FixedWindow, Quota: 10, Period: time.Minute},
			3, 20 * time.Second, 10, 10, 6, 40 * time.Second, 200},
		{"fixed window, used up", testserver.Config{Mode: testserver.FixedWindow, Quota: 3, Period: time.Minute},
			3, 20 * time.Second, 3, 3, 0, 40 * time.Second, 429},
		{"token bucket", testserver.Config{Quota: 10, Period: 10 * time.Second, Refill: time.Second},
			3, 2 * time.Second, 10, 10, 8, 2 * time.Second, 200},
		{"gcra without burst", testserver.Config{Mode: testserver.GCRA, Quota: 2, Period: 10 * time.Second},
			1, time.Second, 2, 1, 0, 4 * time.Second, 429},
		// An API whose headers tell a plan's limit while its gateway
		// enforces more (Config.AdvertiseQuota): what remains is the
		// advertised limit less what was used.
		{"fixed window advertising less", testserver.Config{Mode: testserver.FixedWindow, Quota: 10, Period: time.Minute, AdvertiseQuota: 5},
			3, 20 * time.Second, 5, 5, 1, 40 * time.Second, 200},
		{"fixed window used past what it advertises", testserver.Config{Mode: testserver.FixedWindow, Quota: 10, Period: time.Minute, AdvertiseQuota: 2},
			3, 20 * time.Second, 2, 2, 0, 40 * time.Second, 200},
		{"token bucket advertising less", testserver.Config{Quota: 10, Period: 10 * time.Second, Refill: time.Second, AdvertiseQuota: 4},
			3, 2 * time.Second, 4, 4, 2, 2 * time.Second, 200},
		{"gcra advertising more", testserver.Config{Mode: testserver.GCRA, Quota: 2, Period: 10 * time.Second, AdvertiseQuota: 20},
			1, time.Second, 20, 1, 0, 4 * time.Second, 429},
	} {
		for _, fam := range families {
			t.Run(tc.name+"/"+string(fam), func(t *testing.T) {
				clock := &fakeClock{t: time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)}
				cfg := tc.cfg
				cfg.Now, cfg.Advertise = clock.Now, fam
				h := newHandler(t, cfg)
				for range tc.requests {
					serve(h, "POST", "/api", "x")
				}
				clock.Advance(tc.later)
				res := serve(h, "POST", "/api", "x")
				if res.status != tc.status {
					t.Fatalf("status %d, want %d", res.status, tc.status)
				}
				got := clientcall.ParseAdvertised(res.header, clock.Now())
				if len(got) != 1 {
					t.Fatalf("ParseAdvertised: got %+v, want one limit (headers %v)", got, res.header)
				}
				a := got[0]
				limit := tc.limit
				if fam == testserver.AdvertiseOpenAI || fam == testserver.AdvertiseAnthropic {
					limit = tc.capacity
				}
				if a.Limit != limit || a.Remaining != tc.remain {
					t.Errorf("limit %d, remaining %d; want %d, %d", a.Limit, a.Remaining, limit, tc.remain)
				}
				// Whole seconds round up; a duration is to the millisecond.
				if d := a.Reset.Sub(clock.Now()); d < tc.reset || d >= tc.reset+time.Second {
					t.Errorf("reset in %v, want %v (less than a second more)", d, tc.reset)
				}
			})
		}
	}
	t.Run("queue advertises nothing", func(t *testing.T) {
		h := newHandler(t, testserver.Config{Mode: testserver.Queue, Quota: 100, Advertise: testserver.AdvertiseIETF})
		if got := clientcall.ParseAdvertised(serve(h, "POST", "/api", "x").header, time.Now()); got != nil {
			t.Errorf("ParseAdvertised: got %+v, want nil", got)
		}
	})
	for _, tc := range []struct {
		name string
		cfg  testserver.Config
	}{
		{"an unknown family is refused", testserver.Config{Advertise: "ratelimit"}},
		{"an advertised quota without a family is refused", testserver.Config{Quota: 10, AdvertiseQuota: 5}},
		{"a negative advertised quota is refused", testserver.Config{Quota: 10, Advertise: testserver.AdvertiseIETF, AdvertiseQuota: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := testserver.NewHandler(tc.cfg); !errors.Is(err, testserver.ErrConfig) {
				t.Errorf("NewHandler: got error %v, want one wrapping ErrConfig", err)
			}
		})
	}
}
