package throttle

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// conformPolicy decides from a script by the decision's number, and logs
// each decision; a Postpone is to after (from now).
type conformPolicy struct {
	mu     sync.Mutex
	script []adaptive.Verdict
	after  time.Duration
	n      int // decisions made
	log    *[]string
}

func (p *conformPolicy) Decide(now time.Time, inFlight, cost int) adaptive.Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := adaptive.Send
	if p.n < len(p.script) {
		v = p.script[p.n]
	}
	p.n++
	*p.log = append(*p.log, fmt.Sprintf("decide %d in flight: %s", inFlight, verdictName[v]))
	d := adaptive.Decision{Verdict: v}
	if v == adaptive.Postpone {
		d.RetryAt = now.Add(p.after)
	}
	return d
}

func (p *conformPolicy) Record(time.Time, adaptive.Answer) {}
func (p *conformPolicy) Budget(time.Time, time.Time) int   { return -1 }
func (p *conformPolicy) MarshalBinary() ([]byte, error)    { return nil, nil }
func (p *conformPolicy) UnmarshalBinary([]byte) error      { return nil }
func (p *conformPolicy) logRoute(elem int, outcome string) {
	*p.log = append(*p.log, fmt.Sprintf("route %d: %s", elem, outcome))
}

var verdictName = map[adaptive.Verdict]string{adaptive.Send: "send", adaptive.Postpone: "postpone", adaptive.Reject: "reject"}

// conformCaller answers its calls in turn from a script (true: accepted,
// false: 429), then accepts; it echoes the payload.
type conformCaller struct {
	mu      *sync.Mutex
	answers *[]bool
}

func (c conformCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := true
	if len(*c.answers) > 0 {
		ok, *c.answers = (*c.answers)[0], (*c.answers)[1:]
	}
	if !ok {
		return nil, &clientcall.StatusError{StatusCode: 429}
	}
	return req, nil
}

// conformBackend is conformCaller as the simulator's backend.
type conformBackend struct{ answers []bool }

func (b *conformBackend) Take(time.Duration) (bool, time.Duration) {
	if len(b.answers) == 0 {
		return true, 0
	}
	ok := b.answers[0]
	b.answers = b.answers[1:]
	return ok, 0
}

func (b *conformBackend) NextAvailable(at time.Duration) time.Duration { return at }

// TestConformance runs one scripted policy and one script of answers
// through the DoFn's driver and through the simulator's, one firing of
// one group with one call in flight (with more, the order in which real
// answers come back is not the script's), and checks that both decide and route the same way, in the
// same order, and as expected: both drive the same firing core.
func TestConformance(t *testing.T) {
	send, post, rej := adaptive.Send, adaptive.Postpone, adaptive.Reject
	const n = 5
	for _, c := range []struct {
		name     string
		script   []adaptive.Verdict
		after    time.Duration // of a Postpone
		answers  []bool
		inFlight int
		postpone bool // the Postpone strategy (else Route)
		want     []string
	}{
		{
			name: "send, reject, 429, postpone within the firing", script: []adaptive.Verdict{send, rej, send, post, send, send},
			after: 20 * time.Millisecond, answers: []bool{true, false}, inFlight: 1,
			want: []string{
				"decide 0 in flight: send", "route 0: success",
				"decide 0 in flight: reject", "route 1: client-rejected",
				"decide 0 in flight: send", "route 2: server-throttled",
				"decide 0 in flight: postpone",
				"decide 0 in flight: send", "route 3: success",
				"decide 0 in flight: send", "route 4: success",
			},
		},
		{
			name: "postpone beyond the firing leaves the rest queued", script: []adaptive.Verdict{send, send, post},
			after: time.Hour, answers: []bool{true, true}, inFlight: 1,
			want: []string{
				"decide 0 in flight: send", "route 0: success",
				"decide 0 in flight: send", "route 1: success",
				"decide 0 in flight: postpone",
			},
		},
		{
			name: "a 429 goes back under Postpone", script: []adaptive.Verdict{send, send, send},
			answers: []bool{true, false, true}, inFlight: 1, postpone: true,
			want: []string{
				"decide 0 in flight: send", "route 0: success",
				"decide 0 in flight: send", // 429: requeued
				"decide 0 in flight: send", "route 2: success",
				"decide 0 in flight: send", "route 3: success",
				"decide 0 in flight: send", "route 4: success",
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The DoFn's driver, on the wall clock, with real calls.
			var dofnLog []string
			pol := &conformPolicy{script: c.script, after: c.after, log: &dofnLog}
			strategy := Route
			if c.postpone {
				strategy = Postpone
			}
			f := &throttleFn{settings: settings{Strategy: strategy, BatchSize: n, BatchInterval: time.Second, CallTimeout: time.Minute,
				CallsInFlight: c.inFlight}}
			f.policy = pol
			answers := slices.Clone(c.answers)
			f.invoker = newInvoker(reflect.ValueOf(conformCaller{mu: new(sync.Mutex), answers: &answers}), bytesType, bytesType, false)
			outcome := func(name string) func(Record) {
				return func(r Record) { elem, _ := strconv.Atoi(string(r.Input)); pol.logRoute(elem, name) }
			}
			fr := f.newFiring(context.Background(), "g", time.Now(), emitters{
				ok: func(it *item, _ []byte) { elem, _ := strconv.Atoi(string(it.Payload)); pol.logRoute(elem, "success") },
				ct: outcome("client-rejected"), st: outcome("server-throttled"), errs: outcome("error"),
			})
			its := make([]item, n)
			for i := range its {
				its[i] = item{Payload: []byte(strconv.Itoa(i)), Since: fr.fire.UnixNano()}
			}
			fr.run(its)

			// The simulator's driver, on its virtual clock: the same
			// elements arrive a millisecond apart before the first firing.
			var simLog []string
			spol := &conformPolicy{script: c.script, after: c.after, log: &simLog}
			cfg := sim.Config{
				BatchSize: n, BatchInterval: time.Second, CallsInFlight: c.inFlight, Latency: time.Millisecond,
				FinalThrottled: !c.postpone,
				Backend: sim.BackendModel{Name: "script", New: func(sim.Capacity, uint64) sim.Backend {
					return &conformBackend{answers: slices.Clone(c.answers)}
				}},
				OnFinal: func(arrived time.Duration, o string) { spol.logRoute(int(arrived/time.Millisecond), o) },
			}
			var arrivals []time.Duration
			for i := range n {
				arrivals = append(arrivals, time.Duration(i)*time.Millisecond)
			}
			sc := sim.Scenario{Name: "conform", Duration: 2 * time.Second, Phases: []sim.Phase{{Capacity: 1}}, Arrivals: arrivals}
			alg := sim.Algorithm{Name: "script", New: func(sim.Env) adaptive.Policy { return spol }}
			if _, err := sim.Run(sc, alg, cfg); err != nil {
				t.Fatalf("sim.Run: %v", err)
			}

			if diff := cmp.Diff(dofnLog, simLog); diff != "" {
				t.Errorf("the DoFn's driver (-) and the simulator's (+) differ:\n%s", diff)
			}
			if diff := cmp.Diff(c.want, dofnLog); diff != "" {
				t.Errorf("decisions and routes (-want +got):\n%s", diff)
			}
		})
	}
}
