package throttle

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// TestConformance runs one scripted policy, one script of answers and, in
// some cases, one scripted shared quota through the DoFn's driver (real
// calls in goroutines, on the wall clock) and through the simulator's (on
// its virtual clock), in one firing of one group, and checks that both
// decide, ask the quota and route the same way, in the same order, and as
// expected: both drive the same firing core. The cases cover the policy's
// three verdicts (a Postpone within the firing and beyond it), 429s under
// Route and under Postpone, MaxWait (elements expired at the firing, during
// a postponement, and one a postponement strands), batching (ItemsPerCall),
// two calls in flight answered out of order, elements' costs, a quota
// that grants, defers within the firing, and beyond it, and a quota whose
// round trips to its service are the firing's steps (a grant after a
// delay, a refusal with a retry, the service down failing open). Where
// the drivers differ, because the simulator's firing takes its elements
// from the queue as it decides and the DoFn's holds its whole batch, a
// case checks what agrees (see the stranded element, conformQuota and
// conformService).
//
// The elements arrive before the firing at times of the case's, the same
// for both drivers, so that their waits are the same. Where the DoFn's
// firing waits on the wall clock, the outcome does not depend on how late
// it wakes up. Answers out of order are forced on each side: on the DoFn's
// by calls that return only once another element was routed (holds), on
// the simulator's by the backend's longer waits (waits).
func TestConformance(t *testing.T) {
	send, post, rej := adaptive.Send, adaptive.Postpone, adaptive.Reject
	late := []time.Duration{0, time.Millisecond, 900 * time.Millisecond, 901 * time.Millisecond, 902 * time.Millisecond}
	for _, c := range []struct {
		name     string
		n        int // elements; 0 means 5
		script   []adaptive.Verdict
		after    time.Duration // of a Postpone
		answers  []bool        // the API's to each element sent, in order (true: accepted, false: 429), then accepted
		inFlight int
		postpone bool            // the Postpone strategy (else Route)
		arrivals []time.Duration // of the elements, before the firing at 1 s; nil: a millisecond apart from 0
		maxWait  time.Duration
		perCall  int             // ItemsPerCall
		costs    []int           // of the elements; nil: 1 each
		permits  []conformPermit // a shared quota's answers, then grants; nil: no quota
		trips    []conformTrip   // or the round trips of a quota's service, then failures
		failOpen bool            // with trips
		holds    map[int]int     // the DoFn's: the call of element e returns once element holds[e] was routed
		waits    []time.Duration // the simulator's: the extra latency of each element sent, in order
		want     []string
	}{
		{
			name: "send, reject, 429, postpone within the firing", script: []adaptive.Verdict{send, rej, send, post, send, send},
			after: 20 * time.Millisecond, answers: []bool{true, false}, inFlight: 1,
			want: []string{
				"decide 0 in flight cost 1: send", "route 0: success",
				"decide 0 in flight cost 1: reject", "route 1: client-rejected",
				"decide 0 in flight cost 1: send", "route 2: server-throttled",
				"decide 0 in flight cost 1: postpone",
				"decide 0 in flight cost 1: send", "route 3: success",
				"decide 0 in flight cost 1: send", "route 4: success",
			},
		},
		{
			name: "postpone beyond the firing leaves the rest queued", script: []adaptive.Verdict{send, send, post},
			after: time.Hour, answers: []bool{true, true}, inFlight: 1,
			want: []string{
				"decide 0 in flight cost 1: send", "route 0: success",
				"decide 0 in flight cost 1: send", "route 1: success",
				"decide 0 in flight cost 1: postpone",
			},
		},
		{
			name: "a 429 goes back under Postpone", script: []adaptive.Verdict{send, send, send},
			answers: []bool{true, false, true}, inFlight: 1, postpone: true,
			want: []string{
				"decide 0 in flight cost 1: send", "route 0: success",
				"decide 0 in flight cost 1: send", // 429: requeued
				"decide 0 in flight cost 1: send", "route 2: success",
				"decide 0 in flight cost 1: send", "route 3: success",
				"decide 0 in flight cost 1: send", "route 4: success",
			},
		},
		{
			// 0 and 1 waited 1 s at the firing, 2 to 4 100 ms: they run
			// out 400 ms into it, while the firing waits 450 ms.
			name: "max wait: routed at the firing and during a postponement", script: []adaptive.Verdict{send, post},
			after: 450 * time.Millisecond, inFlight: 1, arrivals: late, maxWait: 500 * time.Millisecond,
			want: []string{
				"route 0: client-rejected", "route 1: client-rejected",
				"decide 0 in flight cost 1: send", "route 2: success",
				"decide 0 in flight cost 1: postpone",
				"route 3: client-rejected", "route 4: client-rejected",
			},
		},
		{
			// The element postponed is routed at once: it could not be sent
			// before its wait runs out. Only it: the DoFn's firing routes
			// the elements behind it too, the simulator's has not taken
			// them and routes them once they ran out, at a later firing.
			name: "max wait: a postponement past it routes the element at once", n: 2, script: []adaptive.Verdict{send, post},
			after: time.Hour, inFlight: 1, maxWait: 2 * time.Second,
			want: []string{
				"decide 0 in flight cost 1: send", "route 0: success",
				"decide 0 in flight cost 1: postpone", "route 1: client-rejected",
			},
		},
		{
			name: "batching: two elements a call, a 429 in one, a call rejected", script: []adaptive.Verdict{send, rej, send},
			answers: []bool{true, false}, inFlight: 1, perCall: 2, costs: []int{2, 3, 1, 1, 4},
			want: []string{
				"decide 0 in flight cost 5: send", "route 0: success", "route 1: server-throttled",
				"decide 0 in flight cost 2: reject", "route 2: client-rejected", "route 3: client-rejected",
				"decide 0 in flight cost 4: send", "route 4: success",
			},
		},
		{
			name: "two calls in flight answered out of order", n: 4, inFlight: 2,
			holds: map[int]int{0: 1, 2: 0, 3: 2}, waits: []time.Duration{5 * time.Millisecond, 0, 10 * time.Millisecond, 10 * time.Millisecond},
			want: []string{
				"decide 0 in flight cost 1: send", "decide 1 in flight cost 1: send",
				"route 1: success", "decide 1 in flight cost 1: send",
				"route 0: success", "decide 1 in flight cost 1: send",
				"route 2: success", "route 3: success",
			},
		},
		{
			name: "costs", script: []adaptive.Verdict{send, rej, send, send, send},
			answers: []bool{true, false}, inFlight: 1, costs: []int{2, 3, 1, 4, 1},
			want: []string{
				"decide 0 in flight cost 2: send", "route 0: success",
				"decide 0 in flight cost 3: reject", "route 1: client-rejected",
				"decide 0 in flight cost 1: send", "route 2: server-throttled",
				"decide 0 in flight cost 4: send", "route 3: success",
				"decide 0 in flight cost 1: send", "route 4: success",
			},
		},
		{
			name: "a quota grants, defers within the firing, then beyond it", script: []adaptive.Verdict{send, rej, send},
			inFlight: 1, costs: []int{1, 2, 3, 1, 1},
			permits: []conformPermit{{ok: true}, {retry: 20 * time.Millisecond}, {ok: true}, {ok: true}, {retry: time.Hour}},
			want: []string{
				"permit cost 1: ok", "decide 0 in flight cost 1: send", "settle: sent", "route 0: success",
				"permit cost 2: retry in 20ms",
				"permit cost 2: ok", "decide 0 in flight cost 2: reject", "settle: returned", "route 1: client-rejected",
				"permit cost 3: ok", "decide 0 in flight cost 3: send", "settle: sent", "route 2: success",
				"permit cost 1: retry in 1h0m0s",
			},
		},
		{
			name:     "the quota's round trips: a grant after a delay, a refusal with a retry, the service down failing open",
			inFlight: 1, failOpen: true,
			trips: []conformTrip{{grant: 2, delay: 20 * time.Millisecond}, {retry: 30 * time.Millisecond, delay: 5 * time.Millisecond}, {fail: true}},
			want: []string{
				"permit cost 1: ask 1", "round trip 1: 2 granted after 20ms",
				"permit cost 1: granted", "decide 0 in flight cost 1: send", "settle: sent", "route 0: success",
				"permit cost 1: granted", "decide 0 in flight cost 1: send", "settle: sent", "route 1: success",
				"permit cost 1: ask 1", "round trip 2: 0 granted after 5ms",
				"permit cost 1: refused",
				"permit cost 1: ask 1", "round trip 3: failed",
				"permit cost 1: open", "decide 0 in flight cost 1: send", "settle: sent", "route 2: success",
				"permit cost 1: open", "decide 0 in flight cost 1: send", "settle: sent", "route 3: success",
				"permit cost 1: open", "decide 0 in flight cost 1: send", "settle: sent", "route 4: success",
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := c.n
			if n == 0 {
				n = 5
			}
			arrivals := c.arrivals
			if arrivals == nil {
				for i := range n {
					arrivals = append(arrivals, time.Duration(i)*time.Millisecond)
				}
			}
			cost := func(elem int) int {
				if c.costs == nil {
					return 1
				}
				return c.costs[elem]
			}
			const interval = time.Second // the firing comes one after the first arrival, at 0

			// The DoFn's driver, on the wall clock, with real calls.
			dofnLog := newConformLog()
			pol := &conformPolicy{script: c.script, after: c.after, log: dofnLog}
			strategy := Route
			if c.postpone {
				strategy = Postpone
			}
			f := &throttleFn{settings: settings{Strategy: strategy, CallTimeout: time.Minute, Settings: firing.Settings{
				BatchSize: n, BatchInterval: interval, CallsInFlight: c.inFlight, MaxWait: c.maxWait, ItemsPerCall: c.perCall}}}
			f.policy = pol
			answers := slices.Clone(c.answers)
			caller := conformCaller{mu: new(sync.Mutex), answers: &answers, holds: c.holds, log: dofnLog}
			f.invoker = newInvoker(reflect.ValueOf(caller), bytesType, bytesType, f.batching())
			outcome := func(name string) func(Record) {
				return func(r Record) { elem, _ := strconv.Atoi(string(r.Input)); dofnLog.route(elem, name) }
			}
			fr := f.newFiring(context.Background(), "g", time.Now(), emitters{
				ok: func(it *item, _ []byte) { elem, _ := strconv.Atoi(string(it.Payload)); dofnLog.route(elem, "success") },
				ct: outcome("client-rejected"), st: outcome("server-throttled"), errs: outcome("error"),
			})
			if c.permits != nil {
				fr.quota = &conformQuota{script: slices.Clone(c.permits), log: dofnLog}
			}
			if c.trips != nil {
				fr.quota = newConformService(c.trips, c.failOpen, dofnLog)
			}
			its := make([]item, n)
			for i := range its {
				its[i] = item{Payload: []byte(strconv.Itoa(i)), Since: fr.fire.Add(arrivals[i] - interval).UnixNano(), Cost: int64(cost(i))}
			}
			fr.run(its)

			// The simulator's driver, on its virtual clock: the same
			// elements arrive at the same times before the first firing.
			simLog := newConformLog()
			spol := &conformPolicy{script: c.script, after: c.after, log: simLog}
			elemAt := map[time.Duration]int{}
			for i, at := range arrivals {
				elemAt[at] = i
			}
			cfg := sim.Config{
				BatchSize: n, BatchInterval: interval, CallsInFlight: c.inFlight, Latency: time.Millisecond,
				FinalThrottled: !c.postpone, MaxWait: c.maxWait, ItemsPerCall: c.perCall,
				CostOf: func(at time.Duration) int { return cost(elemAt[at]) },
				Backend: sim.BackendModel{Name: "script", New: func(sim.Capacity, uint64) sim.Backend {
					return &conformBackend{answers: slices.Clone(c.answers), waits: slices.Clone(c.waits)}
				}},
				OnFinal: func(at time.Duration, o string) { simLog.route(elemAt[at], o) },
			}
			if c.permits != nil {
				q := &conformQuota{script: slices.Clone(c.permits), log: simLog}
				cfg.Quota = func(int) firing.Quota { return q }
			}
			if c.trips != nil {
				q := newConformService(c.trips, c.failOpen, simLog)
				cfg.Quota = func(int) firing.Quota { return q }
			}
			sc := sim.Scenario{Name: "conform", Duration: 2 * time.Second, Phases: []sim.Phase{{Capacity: 1}}, Arrivals: arrivals}
			alg := sim.Algorithm{Name: "script", New: func(sim.Env) adaptive.Policy { return spol }}
			if _, err := sim.Run(sc, alg, cfg); err != nil {
				t.Fatalf("sim.Run: %v", err)
			}

			if diff := cmp.Diff(dofnLog.get(), simLog.get()); diff != "" {
				t.Errorf("the DoFn's driver (-) and the simulator's (+) differ:\n%s", diff)
			}
			if diff := cmp.Diff(c.want, dofnLog.get()); diff != "" {
				t.Errorf("decisions, permits and routes (-want +got):\n%s", diff)
			}
		})
	}
}
