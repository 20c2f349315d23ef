package throttle

import (
	"context"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Unit tests of the bounds on an element's wait (MaxWait, MaxStall) and of
// calls that cannot reach the API, calling the firing directly.

// boundCaller answers by payload: "long" 429 with Retry-After 1h, "short"
// 429 with Retry-After 10s, "down" a refused connection, anything else
// success.
type boundCaller struct{}

func (boundCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	switch string(req) {
	case "long":
		return nil, &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true, RetryAfter: time.Hour}
	case "short":
		return nil, &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true, RetryAfter: 10 * time.Second}
	case "down":
		return nil, refusedError()
	}
	return req, nil
}

// refusedError is the error clientcall.HTTP returns for a refused
// connection.
func refusedError() error {
	err := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	return &clientcall.StatusError{Method: "POST", URL: "http://127.0.0.1:1/api", Message: err.Error(), Err: err}
}

// boundFiring is testFiring with boundCaller and the worker's last
// progress at progress (zero: none noted).
func boundFiring(f *throttleFn, p adaptive.Policy, o *outs, progress time.Time) *driver {
	fr := testFiring(f, p, o)
	f.invoker = newInvoker(reflect.ValueOf(boundCaller{}), bytesType, bytesType, false)
	f.progress = new(progressMark)
	if !progress.IsZero() {
		f.progress.progressed(progress)
	}
	return fr
}

// TestFiringMaxStall: MaxStall counts from the later of when an element
// joined its queue and the worker's last progress: an element that waited
// long while calls kept succeeding is sent, one that waited as long with no
// progress is client-throttled; with MaxWait too, the first bound reached
// applies.
func TestFiringMaxStall(t *testing.T) {
	for _, c := range []struct {
		name     string
		maxWait  time.Duration
		progress time.Time // zero: none noted
		want     counts
		error    string
	}{
		{"progress within the bound", 0, t0.Add(-30 * time.Second), counts{OK: 1}, ""},
		{"no progress for longer", 0, t0.Add(-90 * time.Second), counts{CT: 1},
			"Throttled by Client. Waited longer than the max stall (1m0s) with no call accepted"},
		{"no progress noted", 0, time.Time{}, counts{CT: 1},
			"Throttled by Client. Waited longer than the max stall (1m0s) with no call accepted"},
		{"max wait first", 90 * time.Second, t0.Add(-30 * time.Second), counts{CT: 1},
			"Throttled by Client. Waited longer than the max wait (1m30s)"},
		{"max wait not reached", 3 * time.Minute, t0.Add(-30 * time.Second), counts{OK: 1}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o outs
			fr := boundFiring(&throttleFn{settings: settings{Strategy: Postpone, Settings: firing.Settings{MaxStall: time.Minute, MaxWait: c.maxWait}}}, &scriptPolicy{}, &o, c.progress)
			its := items("x")
			its[0].Since = t0.Add(-2 * time.Minute).UnixNano()
			fr.run(its)
			if got := countsOf(fr, &o); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			for _, r := range o.ct {
				if r.Error != c.error || r.Attempts != 0 {
					t.Errorf("record %+v, want error %q and no attempt", r, c.error)
				}
			}
		})
	}
}

// TestFiringRoutesWhatCannotWait: under Postpone, an element that could not
// be tried again before its bound runs out is routed at once rather than
// held until then: one answered 429 with a Retry-After beyond its bound (to
// ServerThrottled), and the elements the policy holds past their bound
// (to ClientThrottled, saying until when). What can wait goes back.
func TestFiringRoutesWhatCannotWait(t *testing.T) {
	post := adaptive.Postpone
	for _, c := range []struct {
		name      string
		maxWait   time.Duration
		maxStall  time.Duration
		payloads  []string
		script    []adaptive.Verdict
		retryAt   time.Duration // of the policy's postponement, from t0
		want      counts
		wantError string // of the client-throttled records
	}{
		{"Retry-After beyond the max wait", time.Minute, 0, []string{"long"}, nil, 0, counts{ST: 1}, ""},
		{"Retry-After beyond the max stall", 0, time.Minute, []string{"long"}, nil, 0, counts{ST: 1}, ""},
		{"Retry-After within the bound", time.Minute, 0, []string{"short"}, nil, 0, counts{Requeued: 1}, ""},
		{"no bound", 0, 0, []string{"long"}, nil, 0, counts{Requeued: 1}, ""},
		{"held past the max wait", time.Minute, 0, []string{"x", "x"}, []adaptive.Verdict{post}, time.Hour, counts{CT: 2},
			"Throttled by Client. Cannot be sent before 2026-01-02T04:04:05Z, after the max wait (1m0s) runs out"},
		{"held past the max stall", 0, time.Minute, []string{"x"}, []adaptive.Verdict{post}, time.Hour, counts{CT: 1},
			"Throttled by Client. Cannot be sent before 2026-01-02T04:04:05Z, after the max stall (1m0s) runs out"},
		{"held within the bound", time.Minute, 0, []string{"x", "x"}, []adaptive.Verdict{post}, 10 * time.Second, counts{Rest: 2}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o outs
			p := &scriptPolicy{script: c.script, retryAt: t0.Add(c.retryAt)}
			fr := boundFiring(&throttleFn{settings: settings{Strategy: Postpone, Settings: firing.Settings{MaxWait: c.maxWait, MaxStall: c.maxStall}}}, p, &o, time.Time{})
			fr.run(items(c.payloads...))
			if got := countsOf(fr, &o); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			for _, r := range o.st {
				if r.StatusCode != 429 || r.RetryAfter != time.Hour.Milliseconds() || r.Attempts != 1 {
					t.Errorf("server-throttled record %+v, want the 429 with its Retry-After", r)
				}
			}
			for _, r := range o.ct {
				if r.Error != c.wantError {
					t.Errorf("client-throttled record error %q, want %q", r.Error, c.wantError)
				}
			}
		})
	}
}

// TestFiringUnreachable: a call whose connection is refused slows the
// policy as a 429 does (it is told Throttled), and its element is kept as a
// throttled one under Retry and Postpone; it goes to Errors, with the
// connection error, at once under Route and Drop, and under Postpone when
// its wait runs out.
func TestFiringUnreachable(t *testing.T) {
	for _, c := range []struct {
		strategy Strategy
		want     counts
	}{
		{Route, counts{Errs: 1}},
		{Drop, counts{Errs: 1}},
		{Retry, counts{Requeued: 1}},
		{Postpone, counts{Requeued: 1}},
	} {
		t.Run(string(c.strategy), func(t *testing.T) {
			var o outs
			p := &scriptPolicy{}
			fr := boundFiring(&throttleFn{settings: settings{Strategy: c.strategy, Settings: firing.Settings{MaxWait: time.Minute}}}, p, &o, time.Time{})
			fr.run(items("down"))
			if got := countsOf(fr, &o); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if len(p.recorded) != 1 || p.recorded[0] != adaptive.Throttled {
				t.Errorf("policy told %v, want [Throttled]", p.recorded)
			}
			for _, r := range o.errs {
				if !strings.Contains(r.Error, "connection refused") || r.Outcome != OutcomeError || r.Attempts != 1 {
					t.Errorf("record %+v, want the connection error", r)
				}
			}
			if c.strategy != Postpone {
				return
			}
			// Its wait runs out: an error, not client-throttled.
			var o2 outs
			fr2 := boundFiring(&throttleFn{settings: settings{Strategy: Postpone, Settings: firing.Settings{MaxWait: time.Minute}}}, &scriptPolicy{}, &o2, time.Time{})
			fr2.clock = func() time.Time { return t0.Add(time.Hour) }
			fr2.run(fr.requeue)
			if got := countsOf(fr2, &o2); got != (counts{Errs: 1}) {
				t.Errorf("expired: got %+v, want one error", got)
			}
		})
	}
}

// TestProgressMark: the mark keeps the latest progress; a first firing
// counts only while nothing was noted; a nil mark knows of none.
func TestProgressMark(t *testing.T) {
	m := new(progressMark)
	m.started(t0)
	m.started(t0.Add(time.Second))
	if got := m.last(); got != t0.UnixNano() {
		t.Errorf("after two firings: got %v, want the first", time.Unix(0, got))
	}
	m.progressed(t0.Add(time.Minute))
	m.progressed(t0.Add(30 * time.Second)) // late news of an older answer
	if got := m.last(); got != t0.Add(time.Minute).UnixNano() {
		t.Errorf("after progress: got %v, want the latest", time.Unix(0, got))
	}
	var none *progressMark
	none.started(t0)
	none.progressed(t0)
	if none.last() != 0 {
		t.Errorf("nil mark: got %d, want 0", none.last())
	}
}
