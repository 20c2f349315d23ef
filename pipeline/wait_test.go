package pipeline

import (
	"context"
	"errors"
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
func runBounded(t *testing.T, o Options, limit time.Duration) (Summary, *Progress) {
	t.Helper()
	if err := o.Validate(); err != nil {
		t.Fatalf("invalid options: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	p := NewProgress(nil, 0)
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
// element called is server-throttled, and the progress line says why the
// run waits (while it is not done: it is asked here with one element to
// go).
func TestAlwaysRefusedJobEnds(t *testing.T) {
	const n = 10
	tests := []struct {
		name         string
		noRetryAfter bool
		maxWait      time.Duration // 0: auto, the default
		wantCT       string        // in every client-throttled line
		wantProgress string
	}{
		{"Retry-After of an hour, default max wait", false, 0,
			"after the max stall (10m0s) runs out", "(Retry-After "},
		{"no Retry-After, 2s max wait", true, 2 * time.Second, "the max wait (2s)", ", backing off"},
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
			if line := p.Line(n + 1); refused > 0 && (!strings.Contains(line, "waiting: the API answered 429") || !strings.Contains(line, tc.wantProgress)) {
				t.Errorf("progress line %q: want why it waits, with %q", line, tc.wantProgress)
			}
			t.Logf("summary %+v; %d calls; %s", sum, refused, p.Line(n))
		})
	}
}

// TestConnectionRefusedBacksOff: with the API's port closed, the default
// throttle backs off after the first refused connection instead of
// turning the whole input into errors within seconds (its slow start alone
// would send all of it before --max_wait, 6 s here, runs out): far fewer
// calls than elements are made, every element that was tried is an error
// saying the connection was refused, the others are client-throttled once
// --max_wait runs out, and the progress line says the API cannot be
// reached (while the run is not done: it is asked here with one element to
// go).
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
	if line := p.Line(n + 1); !strings.Contains(line, "waiting: the API could not be reached") {
		t.Errorf("progress line %q: want it to say the API cannot be reached", line)
	}
	t.Logf("summary %+v; %s", sum, p.Line(n))
}

// TestProgressSaysWhyItWaits: the progress line says why a run waits when
// its last calls were refused, until when, and what --max_wait does then;
// an accepted call or an answered error ends the account, and so does the
// end of the run.
func TestProgressSaysWhyItWaits(t *testing.T) {
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.Local)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	throttled := func(ra time.Duration) error {
		return &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true, RetryAfter: ra}
	}
	refused := &clientcall.StatusError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}
	type call struct {
		at  time.Duration
		err error
	}
	tests := []struct {
		name           string
		maxWait, stall time.Duration
		calls          []call
		want           string // "" for no account
	}{
		{"no calls", 0, 10 * time.Minute, nil, ""},
		{"accepted", 0, 10 * time.Minute, []call{{time.Second, nil}}, ""},
		{"Retry-After", 0, 10 * time.Minute, []call{{time.Minute, nil}, {2 * time.Minute, throttled(time.Hour)}},
			"; waiting: the API answered 429 to the last call (at 10:02:00), asking for none before 11:02:00 (Retry-After 1h0m0s); " +
				"what is not sent by 10:11:00 goes to the throttled outputs (--max_wait auto: 10m0s with no call accepted)"},
		{"no Retry-After", 0, 10 * time.Minute, []call{{time.Minute, throttled(0)}, {2 * time.Minute, throttled(0)}},
			"; waiting: the API answered 429 to the last 2 calls (the last at 10:02:00), backing off; " +
				"what is not sent by 10:10:00 goes to the throttled outputs (--max_wait auto: 10m0s with no call accepted)"},
		{"unreachable, max wait", 5 * time.Minute, 0, []call{{time.Minute, refused}},
			"; waiting: the API could not be reached on the last call (at 10:01:00); " +
				"an element not sent within 5m0s of its arrival goes to the throttled outputs (--max_wait)"},
		{"no bound", 0, 0, []call{{time.Minute, throttled(0)}},
			"; waiting: the API answered 429 to the last call (at 10:01:00), backing off (--max_wait none: elements wait as long as it takes)"},
		{"an answered error ends it", 0, 10 * time.Minute, []call{{time.Minute, throttled(0)}, {2 * time.Minute, errors.New("HTTP 400")}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProgress(nil, 0)
			p.api = apiState{start: start, maxWait: tc.maxWait, maxStall: tc.stall}
			for _, c := range tc.calls {
				p.observe(at(c.at), c.err)
			}
			line := p.Line(5)
			_, got, _ := strings.Cut(line, "errors=0")
			if got != tc.want {
				t.Errorf("line %q ends with %q, want %q", line, got, tc.want)
			}
			p.add(OutErrors, 5)
			if line := p.Line(5); strings.Contains(line, "waiting") {
				t.Errorf("line %q of a run that is done: want no account of a wait", line)
			}
		})
	}
}
