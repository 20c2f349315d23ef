package report

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/pipeline"
)

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
				p.Called(at(c.at), c.err)
			}
			line := p.Line(5)
			_, got, _ := strings.Cut(line, "errors=0")
			if got != tc.want {
				t.Errorf("line %q ends with %q, want %q", line, got, tc.want)
			}
			p.Written(pipeline.OutErrors, 5)
			if line := p.Line(5); strings.Contains(line, "waiting") {
				t.Errorf("line %q of a run that is done: want no account of a wait", line)
			}
		})
	}
}

// TestProgressLine: the line counts each output, with the share done when
// the total is known, and leaves parked out while it is zero; Start sets
// the counts to zero; a nil Progress counts nothing.
func TestProgressLine(t *testing.T) {
	p := NewProgress(nil, 0)
	p.Start(0, 0)
	p.Written(pipeline.OutSuccess, 3)
	p.Written(pipeline.OutErrors, 1)
	p.Written("no such output", 7)
	tests := []struct {
		total int64
		want  string
	}{
		{-1, "progress: 4 done success=3 client_throttled=0 server_throttled=0 errors=1"},
		{8, "progress: 4/8 done (50%) success=3 client_throttled=0 server_throttled=0 errors=1"},
	}
	for _, tc := range tests {
		if got := p.Line(tc.total); got != tc.want {
			t.Errorf("Line(%d) = %q, want %q", tc.total, got, tc.want)
		}
	}
	p.Written(pipeline.OutParked, 2)
	p.Written(pipeline.OutErrors, -1)
	if got, want := p.Line(-1), "progress: 5 done success=3 client_throttled=0 server_throttled=0 errors=0 parked=2"; got != want {
		t.Errorf("Line(-1) = %q, want %q", got, want)
	}
	p.Start(time.Minute, 0)
	if got, want := p.Line(-1), "progress: 0 done success=0 client_throttled=0 server_throttled=0 errors=0"; got != want {
		t.Errorf("after Start: Line(-1) = %q, want %q", got, want)
	}

	var nilp *Progress
	nilp.Start(0, 0)
	nilp.Written(pipeline.OutSuccess, 1)
	nilp.Called(time.Now(), errors.New("x"))
	if got := nilp.Counts(); len(got) != 0 {
		t.Errorf("nil Progress: Counts() = %v, want none", got)
	}
	nilp.Report(1)()
}

// TestReport: Report writes the line every interval until it is stopped,
// and nothing without a writer (fake time: testing/synctest).
func TestReport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b strings.Builder
		p := NewProgress(&b, 3*time.Second)
		p.Start(0, 0)
		p.Written(pipeline.OutSuccess, 2)
		stop := p.Report(10)
		time.Sleep(7 * time.Second)
		stop()
		line := "progress: 2/10 done (20%) success=2 client_throttled=0 server_throttled=0 errors=0\n"
		if got, want := b.String(), line+line; got != want {
			t.Errorf("after 7s at 3s: got %q, want %q", got, want)
		}
		silent := NewProgress(nil, time.Second)
		stop = silent.Report(10)
		time.Sleep(3 * time.Second)
		stop()
	})
}
