package testserver_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestAdminRejectsBadParams(t *testing.T) {
	for _, target := range []string{
		"/admin/quota",
		"/admin/quota?quota=-1",
		"/admin/quota?quota=abc",
		"/admin/quota?quota=1.5",
		"/admin/quota?period=0s",
		"/admin/quota?period=-1s",
		"/admin/quota?period=soon",
		"/admin/quota?quota=1&quota=2",
		"/admin/quota?qouta=1",
		"/admin/quota?quota=4611686018427387904&period=1h",
		"/admin/outage",
		"/admin/outage?status=500",
		"/admin/outage?status=abc",
		"/admin/faults",
		"/admin/faults?latency=-1ms",
		"/admin/faults?latency=fast",
		"/admin/faults?jitter=-1ms",
		"/admin/faults?error_rate=1.5",
		"/admin/faults?error_rate=-0.1",
		"/admin/faults?error_rate=NaN",
		"/admin/faults?item_error_rate=1.5",
		"/admin/faults?item_error_rate=-0.1",
		"/admin/faults?item_error_rate=NaN",
		"/admin/faults?item_error_rate=half",
		"/admin/faults?item_error_rate=0.1&item_error_rate=0.2",
		"/admin/faults?error_rate=0.1&latency=1ms&color=red",
		"/admin/reset?all=1",
		"/report",
		"/report?client_throttled=-1",
		"/report?client_throttled=x",
		"/mark",
		"/mark?label=",
		"/mark?label=a&label=b",
		"/mark?label=run&color=red",
	} {
		t.Run(target, func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 7, Now: clock.Now})
			before := h.Stats()
			r := serve(h, "POST", target, "")
			if got, want := r.status, http.StatusBadRequest; got != want {
				t.Errorf("status: got %d, want %d", got, want)
			}
			if !strings.HasPrefix(r.body, "testserver: ") {
				t.Errorf("body: got %q, want a message starting with %q", r.body, "testserver: ")
			}
			// Nothing changed: the quota and the faults are as before.
			after := h.Stats()
			if after.Quota != before.Quota || after.Period != before.Period || after.Outage != 0 || after.ClientThrottled != 0 || len(after.Marks) != 0 {
				t.Errorf("Stats() changed: got %+v, want %+v", after, before)
			}
			if got, want := serve(h, "POST", "/api", "x").status, http.StatusOK; got != want {
				t.Errorf("API after bad admin request: got %d, want %d", got, want)
			}
		})
	}
}

func TestAdminChangesBehaviour(t *testing.T) {
	for _, tc := range []struct {
		name   string
		admin  []string // POSTed in order, each must answer 200
		api    int      // API requests sent afterwards
		want   []int    // their statuses, in order; the last one repeats
		period string   // Stats().Period afterwards
	}{
		{"no change", nil, 4, []int{200, 200, 200, 429}, "1s"},
		{"drop quota", []string{"/admin/quota?quota=1"}, 2, []int{200, 429}, "1s"},
		{"raise quota and period", []string{"/admin/quota?quota=5&period=1m"}, 6, []int{200, 200, 200, 200, 200, 429}, "1m0s"},
		{"period only", []string{"/admin/quota?period=2s"}, 4, []int{200, 200, 200, 429}, "2s"},
		{"unlimited", []string{"/admin/quota?quota=0"}, 5, []int{200}, "1s"},
		{"outage 503", []string{"/admin/outage?status=503"}, 2, []int{503}, "1s"},
		{"outage 429", []string{"/admin/outage?status=429"}, 2, []int{429}, "1s"},
		{"outage ended", []string{"/admin/outage?status=503", "/admin/outage?status=0"}, 4, []int{200, 200, 200, 429}, "1s"},
		{"all errors", []string{"/admin/faults?error_rate=1"}, 4, []int{500, 500, 500, 429}, "1s"},
		{"errors off", []string{"/admin/faults?error_rate=1", "/admin/faults?error_rate=0"}, 2, []int{200}, "1s"},
		{"latency only keeps error rate", []string{"/admin/faults?error_rate=1", "/admin/faults?latency=1ms&jitter=1ms"}, 2, []int{500}, "1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 3, Now: clock.Now})
			for _, target := range tc.admin {
				if r := serve(h, "POST", target, ""); r.status != http.StatusOK {
					t.Fatalf("POST %s: got %d %q, want 200", target, r.status, r.body)
				}
			}
			for i := range tc.api {
				want := tc.want[min(i, len(tc.want)-1)]
				if got := serve(h, "POST", "/api", "x").status; got != want {
					t.Errorf("API request %d: got %d, want %d", i, got, want)
				}
			}
			if got := h.Stats().Period; got != tc.period {
				t.Errorf("Stats().Period: got %s, want %s", got, tc.period)
			}
		})
	}
}

func TestAdminItemErrorRate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		admin []string // POSTed in order, each must answer 200
		want  string   // the answer to the batch [1,2]
	}{
		{"none", nil, `[1,2]`},
		{"all", []string{"/admin/faults?item_error_rate=1"}, "[" + itemError + "," + itemError + "]"},
		{"off again", []string{"/admin/faults?item_error_rate=1", "/admin/faults?item_error_rate=0"}, `[1,2]`},
		{"error_rate alone keeps it", []string{"/admin/faults?item_error_rate=1", "/admin/faults?error_rate=0"}, "[" + itemError + "," + itemError + "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandler(t, testserver.Config{})
			for _, target := range tc.admin {
				if r := serve(h, "POST", target, ""); r.status != http.StatusOK {
					t.Fatalf("POST %s: got %d %q, want 200", target, r.status, r.body)
				}
			}
			if r := serve(h, "POST", "/api", "[1,2]"); r.status != http.StatusOK || r.body != tc.want {
				t.Errorf("batch: got %d %q, want 200 %q", r.status, r.body, tc.want)
			}
		})
	}
}

func TestAdminFaultsLatency(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	if r := serve(h, "POST", "/admin/faults?latency=30ms&jitter=10ms", ""); r.status != http.StatusOK {
		t.Fatalf("POST /admin/faults: got %d %q, want 200", r.status, r.body)
	}
	start := time.Now()
	serve(h, "POST", "/api", "x")
	if got, want := time.Since(start), 30*time.Millisecond; got < want {
		t.Errorf("API request took %v, want at least %v", got, want)
	}
}

func TestAdminResetAndReport(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Quota: 1, Now: clock.Now})
	serve(h, "POST", "/api", "x")
	serve(h, "POST", "/api", "x")
	if r := serve(h, "POST", "/report?client_throttled=5", ""); r.status != http.StatusOK {
		t.Fatalf("POST /report: got %d %q, want 200", r.status, r.body)
	}
	s := h.Stats()
	if s.Accepted != 1 || s.Rejected != 1 || s.ClientThrottled != 5 {
		t.Errorf("before reset: got accepted %d rejected %d client_throttled %d, want 1 1 5", s.Accepted, s.Rejected, s.ClientThrottled)
	}
	if r := serve(h, "POST", "/admin/reset", ""); r.status != http.StatusOK {
		t.Fatalf("POST /admin/reset: got %d %q, want 200", r.status, r.body)
	}
	s = h.Stats()
	if s.Accepted != 0 || s.Rejected != 0 || s.ClientThrottled != 0 || len(s.Series) != 0 {
		t.Errorf("after reset: got %+v, want zero counts and no series", s)
	}
	// Reset leaves the quota alone: it is still used up.
	if got, want := serve(h, "POST", "/api", "x").status, http.StatusTooManyRequests; got != want {
		t.Errorf("API after reset: got %d, want %d", got, want)
	}
}

// Marks set through the Go method and POST /mark come back in Stats, at the
// handler's clock, oldest first; the oldest are dropped beyond the limit,
// and Reset clears them.
func TestMarks(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Now: clock.Now})
	h.Mark("run 1")
	clock.Advance(3 * time.Second)
	if r := serve(h, "POST", "/mark?label=run+2", ""); r.status != http.StatusOK {
		t.Fatalf("POST /mark: got %d %q, want 200", r.status, r.body)
	}
	t0 := clock.Now().Unix() - 3
	want := []testserver.Mark{{T: t0, Label: "run 1"}, {T: t0 + 3, Label: "run 2"}}
	if got := h.Stats().Marks; !slices.Equal(got, want) {
		t.Errorf("Marks: got %+v, want %+v", got, want)
	}
	for i := range 150 {
		h.Mark(strconv.Itoa(i))
	}
	got := h.Stats().Marks
	if len(got) != 100 || got[0].Label != "50" || got[99].Label != "149" {
		t.Errorf("after 152 marks: got %d, from %q to %q, want the newest 100, 50 to 149", len(got), got[0].Label, got[len(got)-1].Label)
	}
	h.Reset()
	if got := h.Stats().Marks; len(got) != 0 {
		t.Errorf("after Reset: got %d marks, want 0", len(got))
	}
}
