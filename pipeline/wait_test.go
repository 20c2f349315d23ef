package pipeline

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestMaxWaitDefaults: --max_wait's auto gives every source a finite
// bound, so that a job against an API that accepts nothing ends: a bound
// on the wait without progress for bounded sources, a bound on every wait
// for streaming ones. A duration bounds every wait; none bounds nothing.
func TestMaxWaitDefaults(t *testing.T) {
	tests := []struct {
		name            string
		o               Options
		wantWait, stall time.Duration
	}{
		{"files, auto", Options{Input: "in.jsonl"}, 0, DefaultBoundedMaxStall},
		{"generate, auto", Options{Generate: 10}, 0, DefaultBoundedMaxStall},
		{"generate_rate, auto", Options{Generate: 10, GenerateRate: 5}, DefaultStreamingMaxWait, 0},
		{"subscription, auto", Options{Subscription: "s"}, DefaultStreamingMaxWait, 0},
		{"files, a duration", Options{Input: "in.jsonl", MaxWait: time.Hour}, time.Hour, 0},
		{"subscription, a duration", Options{Subscription: "s", MaxWait: time.Minute}, time.Minute, 0},
		{"files, none", Options{Input: "in.jsonl", MaxWait: NoMaxWait}, 0, 0},
		{"subscription, none", Options{Subscription: "s", MaxWait: NoMaxWait}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, stall := tc.o.maxWait(), tc.o.maxStall(); got != tc.wantWait || stall != tc.stall {
				t.Errorf("max wait %v, max stall %v; want %v and %v", got, stall, tc.wantWait, tc.stall)
			}
		})
	}
	if DefaultBoundedMaxStall <= 0 || DefaultStreamingMaxWait <= 0 {
		t.Errorf("defaults %v and %v: want both finite and positive", DefaultBoundedMaxStall, DefaultStreamingMaxWait)
	}
}

// refusingAPI starts a quota server that refuses every call from now on
// with 429 (a fixed window of one call an hour, used up here), with a
// Retry-After of about an hour or, with noRetryAfter, none.
func refusingAPI(t *testing.T, noRetryAfter bool) *testserver.Server {
	t.Helper()
	srv, err := testserver.NewServer(testserver.Config{Quota: 1, Period: time.Hour, Mode: testserver.FixedWindow, NoRetryAfter: noRetryAfter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.Endpoint(), "application/json", strings.NewReader(`{"prime":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("priming call: got HTTP %d, want 200", resp.StatusCode)
	}
	return srv
}

// runBounded runs o like runCounted, but fails the test rather than hang
// if the run does not end within limit.
func runBounded(t *testing.T, o Options, limit time.Duration) (Summary, *countingMonitor) {
	t.Helper()
	if err := o.Validate(); err != nil {
		t.Fatalf("invalid options: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	p := newCountingMonitor()
	sum, err := Run(ctx, o, p)
	if err != nil {
		t.Fatalf("run did not end within %v: %v", limit, err)
	}
	return sum, p
}

// defaultThrottle sets o's throttle to the binary's defaults: the paced
// mode, its strategy (postpone) and scope, --max_wait auto.
func defaultThrottle(o *Options) {
	o.Mode, o.Strategy, o.Scope, o.MaxWait = "", "", "", 0
}

// TestAlwaysRefusedJobEnds: a bounded job with the default throttle
// against an API that refuses every call ends, with every element in
// exactly one throttled output. With a Retry-After of an hour (longer than
// the default bound) it ends at once: the element answered 429 is
// server-throttled, and those that cannot be sent before the bound runs out
// are client-throttled, saying so. Without a Retry-After the pacer probes
// until --max_wait (2 s here) runs out. Every call made was refused, every
// element called is server-throttled, and the run's Monitor was told the
// refusals (the progress line's account of a wait; package internal/report)
// and the run's bounds.
func TestAlwaysRefusedJobEnds(t *testing.T) {
	const n = 10
	tests := []struct {
		name         string
		noRetryAfter bool
		maxWait      time.Duration // 0: auto, the default
		wantCT       string        // in every client-throttled line
		retryAfter   bool          // the last call's error has a Retry-After
		wait, stall  time.Duration // the bounds the Monitor is told
	}{
		{"Retry-After of an hour, default max wait", false, 0,
			"after the max stall (10m0s) runs out", true, 0, DefaultBoundedMaxStall},
		{"no Retry-After, 2s max wait", true, 2 * time.Second, "the max wait (2s)", false, 2 * time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := refusingAPI(t, tc.noRetryAfter)
			o := baseOptions(t)
			defaultThrottle(&o)
			o.MaxWait = tc.maxWait
			o.Generate = n
			o.CallerOptions.URL = srv.Endpoint()
			sum, p := runBounded(t, o, 2*time.Minute)

			refused := srv.Handler.Stats().Rejected
			// The default bound (10 minutes) leaves time for a call; a
			// short one may run out before the first (on a busy machine).
			if tc.maxWait == 0 && refused == 0 {
				t.Errorf("no call made, want one")
			}
			if sum.Total() != n || sum.Success != 0 || sum.Errors != 0 || sum.ServerThrottled > refused || (refused > 0) != (sum.ServerThrottled > 0) {
				t.Errorf("summary %+v: want %d throttled, at most the %d refused calls server-throttled, and some if any", sum, n, refused)
			}
			if sum.Requests != refused {
				t.Errorf("%d calls made, %d refused: want every call refused", sum.Requests, refused)
			}
			lines := outputLines(t, o.OutputPrefix)
			if got := len(lines[OutServerThrottled]); int64(got) != sum.ServerThrottled {
				t.Errorf("%d server_throttled lines, summary %d", got, sum.ServerThrottled)
			}
			if got := len(lines[OutClientThrottled]); int64(got) != sum.ClientThrottled {
				t.Errorf("%d client_throttled lines, summary %d", got, sum.ClientThrottled)
			}
			for _, l := range lines[OutClientThrottled] {
				if e, _ := l["error"].(string); !strings.Contains(e, tc.wantCT) {
					t.Errorf("client_throttled line %v: want an error containing %q", l, tc.wantCT)
				}
			}
			calls, last := p.lastCall()
			if int64(calls) != refused {
				t.Errorf("monitor told of %d calls, want the %d made", calls, refused)
			}
			if _, ra := clientcall.RetryAfter(last); refused > 0 && (clientcall.Classify(last) != clientcall.Throttled || ra != tc.retryAfter) {
				t.Errorf("monitor told of a last call that failed with %v: want a 429, with a Retry-After: %v", last, tc.retryAfter)
			}
			if p.starts != 1 || p.maxWait != tc.wait || p.maxStall != tc.stall {
				t.Errorf("monitor started %d times with max wait %v, max stall %v; want once with %v and %v", p.starts, p.maxWait, p.maxStall, tc.wait, tc.stall)
			}
			t.Logf("summary %+v; %d calls", sum, refused)
		})
	}
}

// TestConnectionRefusedBacksOff: with the API's port closed, the default
// throttle backs off after the first refused connection instead of
// turning the whole input into errors within seconds (its slow start alone
// would send all of it before --max_wait, 6 s here, runs out): far fewer
// calls than elements are made, every element that was tried is an error
// saying the connection was refused, the others are client-throttled once
// --max_wait runs out, and the run's Monitor was told that the API could
// not be reached.
func TestConnectionRefusedBacksOff(t *testing.T) {
	const n = 200
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/api"
	ln.Close()
	o := baseOptions(t)
	defaultThrottle(&o)
	o.MaxWait = 6 * time.Second
	o.Generate = n
	o.CallerOptions.URL = url
	sum, p := runBounded(t, o, 2*time.Minute)

	if sum.Total() != n || sum.Errors < 1 || sum.Errors+sum.ClientThrottled != n {
		t.Errorf("summary %+v: want %d errors and client-throttled, at least one error", sum, n)
	}
	if sum.Requests > n/8 {
		t.Errorf("%d calls for %d elements: want the throttle to back off (at most %d)", sum.Requests, n, n/8)
	}
	lines := outputLines(t, o.OutputPrefix)
	for _, l := range lines[OutErrors] {
		if e, _ := l["error"].(string); !strings.Contains(e, "connection refused") {
			t.Errorf("error line %v: want the refused connection", l)
		}
	}
	if got := int64(len(lines[OutErrors]) + len(lines[OutClientThrottled])); got != n {
		t.Errorf("%d error and client_throttled lines, want %d", got, n)
	}
	if calls, last := p.lastCall(); calls == 0 || clientcall.Classify(last) != clientcall.Unreachable {
		t.Errorf("monitor told of %d calls, the last failing with %v: want some, the last unreachable", calls, last)
	}
	t.Logf("summary %+v", sum)
}
