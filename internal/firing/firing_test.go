package firing_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// script is a policy answering from a list of decisions (Send once it is
// used up).
type script struct{ ds []adaptive.Decision }

func (s *script) Decide(time.Time, int, int) adaptive.Decision {
	if len(s.ds) == 0 {
		return adaptive.Decision{Verdict: adaptive.Send}
	}
	d := s.ds[0]
	s.ds = s.ds[1:]
	return d
}
func (s *script) Record(time.Time, adaptive.Answer) {}
func (s *script) Budget(time.Time, time.Time) int   { return -1 }

// drive runs f at now, answering every call with answer (by the index of
// its first element), and returns what it did, in order.
func drive(f *firing.Firing, now time.Time, answer func(elem int) firing.Result) []string {
	var log []string
	for {
		s := f.Next(now)
		switch s.Action {
		case firing.Done:
			return log
		case firing.Call:
			log = append(log, "call "+fmtInts(s.Elems))
			rs := make([]firing.Result, len(s.Elems))
			for i, k := range s.Elems {
				rs[i] = answer(k)
			}
			f.Answered(now, s.Call, rs)
		case firing.Route:
			log = append(log, "route "+fmtInts([]int{s.Elem})+" "+kinds[s.To])
		case firing.Wait:
			log = append(log, "wait")
			now = s.Until
		}
	}
}

var kinds = map[firing.Kind]string{firing.Success: "success", firing.ClientThrottled: "client", firing.ServerThrottled: "server",
	firing.Error: "error", firing.Dropped: "dropped"}

func fmtInts(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += string(rune('0' + x))
	}
	return s
}

func accept(int) firing.Result { return firing.Result{Class: clientcall.Success} }

func TestFiring(t *testing.T) {
	later := adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: t0.Add(time.Hour)}
	soon := adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: t0.Add(100 * time.Millisecond)}
	for _, c := range []struct {
		name    string
		cfg     firing.Config
		since   []time.Duration // each element's wait before t0
		ds      []adaptive.Decision
		answer  func(int) firing.Result
		want    []string
		requeue []int
		rest    []int
		timer   time.Time
		paced   bool // the policy postponed (Firing.Paced)
	}{
		{
			name: "an element past its max wait is routed when added", cfg: firing.Config{MaxWait: time.Second},
			since: []time.Duration{2 * time.Second, 0}, answer: accept,
			want: []string{"route 0 client", "call 1", "route 1 success"},
		},
		{
			name: "calls of up to ItemsPerCall elements", cfg: firing.Config{ItemsPerCall: 2},
			since: make([]time.Duration, 3), answer: accept,
			want: []string{"call 0,1", "route 0 success", "route 1 success", "call 2", "route 2 success"},
		},
		{
			name: "a postponement within the wait is waited for", cfg: firing.Config{Wait: time.Second},
			since: make([]time.Duration, 1), ds: []adaptive.Decision{soon}, answer: accept,
			want:  []string{"wait", "call 0", "route 0 success"},
			paced: true,
		},
		{
			name: "a postponement beyond the wait leaves the rest queued", cfg: firing.Config{Wait: time.Second, BatchInterval: time.Second},
			since: make([]time.Duration, 2), ds: []adaptive.Decision{later}, answer: accept,
			rest: []int{0, 1}, timer: t0.Add(time.Hour - 100*time.Millisecond), // the next firing waits inside itself for the last 100 ms
			paced: true,
		},
		{
			name: "a firing that ends at its postponement starts its successor at the time it asked for", cfg: firing.Config{BatchInterval: time.Second},
			since: make([]time.Duration, 2), ds: []adaptive.Decision{later}, answer: accept,
			rest: []int{0, 1}, timer: t0.Add(time.Hour),
			paced: true,
		},
		{
			name: "one that would run out first is routed now", cfg: firing.Config{Wait: time.Second, MaxWait: time.Minute},
			since: make([]time.Duration, 1), ds: []adaptive.Decision{later}, answer: accept,
			want:  []string{"route 0 client"},
			paced: true,
		},
		{
			name: "Retry requeues a 429 after its Retry-After", cfg: firing.Config{Strategy: firing.Retry, MaxAttempts: 3, MaxAge: time.Hour, BatchInterval: time.Second},
			since: make([]time.Duration, 1),
			answer: func(int) firing.Result {
				return firing.Result{Class: clientcall.Throttled, RetryAfter: 5 * time.Second}
			},
			want: []string{"call 0"}, requeue: []int{0}, timer: t0.Add(time.Second),
		},
		{
			name: "Drop discards a 429 but routes an error", cfg: firing.Config{Strategy: firing.Drop},
			since:  make([]time.Duration, 2),
			answer: func(k int) firing.Result { return firing.Result{Class: clientcall.Class(1 + k)} },
			want:   []string{"call 0", "route 0 dropped", "call 1", "route 1 error"},
		},
		{
			name: "FinalRejects routes a rejection under Postpone", cfg: firing.Config{Strategy: firing.Postpone, FinalRejects: true},
			since: make([]time.Duration, 1), ds: []adaptive.Decision{{Verdict: adaptive.Reject}}, answer: accept,
			want: []string{"route 0 client"},
		},
		{
			name: "Postpone requeues a rejection", cfg: firing.Config{Strategy: firing.Postpone},
			since: make([]time.Duration, 1), ds: []adaptive.Decision{{Verdict: adaptive.Reject}}, answer: accept,
			requeue: []int{0},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := firing.New(c.cfg, firing.Env{Policy: &script{ds: c.ds}}, t0, t0)
			for _, w := range c.since {
				f.Add(t0, firing.Elem{Since: t0.Add(-w)})
			}
			got := drive(f, t0, c.answer)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.requeue, f.Requeue()); diff != "" {
				t.Errorf("requeued (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.rest, f.Rest()); diff != "" {
				t.Errorf("rest (-want +got):\n%s", diff)
			}
			if got := f.Paced(); got != c.paced {
				t.Errorf("Paced() = %v, want %v", got, c.paced)
			}
			if !c.timer.IsZero() {
				if got := f.Timer(t0); !got.Equal(c.timer) {
					t.Errorf("timer %v, want %v", got, c.timer)
				}
			}
		})
	}
}

// TestFiringAttempts: the elements' bookkeeping follows their attempts.
func TestFiringAttempts(t *testing.T) {
	f := firing.New(firing.Config{Strategy: firing.Retry, MaxAttempts: 5, MaxAge: time.Hour, BatchInterval: time.Second},
		firing.Env{Policy: &script{}}, t0, t0)
	f.Add(t0, firing.Elem{Since: t0, Attempts: 1, First: t0.Add(-time.Minute)})
	drive(f, t0, func(int) firing.Result {
		return firing.Result{Class: clientcall.Throttled, RetryAfter: 1500 * time.Millisecond}
	})
	e := f.Elem(0)
	want := firing.Elem{Since: t0, Attempts: 2, First: t0.Add(-time.Minute), NotBefore: t0.Add(1500 * time.Millisecond),
		Last: firing.ServerThrottled, Cost: 1}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("element (-want +got):\n%s", diff)
	}
	if f.Attempts() != 1 || !f.Throttled() {
		t.Errorf("attempts %d, throttled %v; want 1, true", f.Attempts(), f.Throttled())
	}
}

// TestFiringAddWhileRunning: an element added between steps is decided in
// the same firing, and one added once a postponement stopped the decisions
// goes to Rest, not lost; Live counts both.
func TestFiringAddWhileRunning(t *testing.T) {
	cfg := firing.Config{BatchInterval: time.Second, Wait: time.Second}
	t.Run("running", func(t *testing.T) {
		f := firing.New(cfg, firing.Env{Policy: &script{}}, t0, t0)
		f.Add(t0, firing.Elem{Since: t0})
		var log []string
		added := false
		for s := f.Next(t0); s.Action != firing.Done; s = f.Next(t0) {
			switch s.Action {
			case firing.Call:
				log = append(log, "call "+fmtInts(s.Elems))
				f.Answered(t0, s.Call, []firing.Result{{Class: clientcall.Success}})
			case firing.Route:
				log = append(log, "route "+fmtInts([]int{s.Elem}))
				if !added {
					added = true
					if i, live := f.Add(t0, firing.Elem{Since: t0}); i != 1 || !live {
						t.Fatalf("Add = %d, %v; want 1, live", i, live)
					}
				}
			}
		}
		if want := []string{"call 0", "route 0", "call 1", "route 1"}; !cmp.Equal(log, want) {
			t.Errorf("steps %v, want %v", log, want)
		}
		if f.Live() != 2 || len(f.Rest()) != 0 {
			t.Errorf("live %d, rest %v; want 2 and none", f.Live(), f.Rest())
		}
	})
	t.Run("stopped", func(t *testing.T) {
		later := adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: t0.Add(time.Hour)}
		f := firing.New(cfg, firing.Env{Policy: &script{ds: []adaptive.Decision{later}}}, t0, t0)
		f.Add(t0, firing.Elem{Since: t0})
		if got := drive(f, t0, accept); len(got) != 0 {
			t.Fatalf("steps %v, want none: the policy postponed past the firing", got)
		}
		f.Add(t0, firing.Elem{Since: t0})
		if s := f.Next(t0); s.Action != firing.Done {
			t.Errorf("after an Add to a stopped firing: %+v, want Done", s)
		}
		if want := []int{0, 1}; !cmp.Equal(f.Rest(), want) || f.Live() != 2 {
			t.Errorf("rest %v, live %d; want %v and 2", f.Rest(), f.Live(), want)
		}
	})
}

// TestFiringDetach: with Detach a firing ends at its deadline with calls
// unanswered and lists exactly those; a later firing that carries them
// routes each element once, counts them against CallsInFlight, and
// ignores a second answer to a call.
func TestFiringDetach(t *testing.T) {
	cfg := firing.Config{BatchInterval: time.Second, Wait: time.Second, CallsInFlight: 3, Detach: true,
		Strategy: firing.Postpone}
	f := firing.New(cfg, firing.Env{Policy: &script{}}, t0, t0)
	for range 6 {
		f.Add(t0, firing.Elem{Since: t0})
	}
	now := t0
	var log []string
	for s := f.Next(now); s.Action != firing.Done; s = f.Next(now) {
		switch s.Action {
		case firing.Call:
			log = append(log, "call "+fmtInts(s.Elems))
			if s.Call == 1 { // answered within the firing
				f.Answered(now, s.Call, []firing.Result{{Class: clientcall.Success}})
			}
		case firing.Route:
			log = append(log, "route "+fmtInts([]int{s.Elem})+" "+kinds[s.To])
		case firing.Wait:
			if !s.Until.Equal(t0.Add(time.Second)) {
				t.Fatalf("wait until %v, want the deadline", s.Until)
			}
			log = append(log, "wait")
			now = s.Until
		}
	}
	want := []string{"call 0", "call 1", "route 1 success", "call 2", "call 3", "wait"}
	if !cmp.Equal(log, want) {
		t.Errorf("first firing: steps %v, want %v", log, want)
	}
	if got, want := f.Flying(), []int{0, 2, 3}; !cmp.Equal(got, want) {
		t.Errorf("flying %v, want %v", got, want)
	}
	if got, want := f.Rest(), []int{4, 5}; !cmp.Equal(got, want) {
		t.Errorf("rest %v, want %v", got, want)
	}
	if got := f.Full(); got != 3 {
		t.Errorf("Full() = %d, want 3: the firing ended with elements waiting for a free call", got)
	}
	// Its one answer came at once: the oldest call is overdue, the timer now.
	if got, want := f.Timer(now), now; !got.Equal(want) {
		t.Errorf("timer %v, want %v", got, want)
	}

	// The second firing carries the three calls, one answered since.
	at := now.Add(100 * time.Millisecond)
	g := firing.New(cfg, firing.Env{Policy: &script{}}, at, at)
	var carried []int
	for _, c := range f.Flying() {
		var elems []firing.Elem
		for _, k := range f.CallElems(c) {
			elems = append(elems, f.Elem(k))
		}
		carried = append(carried, g.Carry(f.CallSent(c), elems, f.CallProb(c)))
	}
	g.Answered(at, carried[0], []firing.Result{{Class: clientcall.Throttled}})
	g.Answered(at, carried[0], []firing.Result{{Class: clientcall.Success}}) // ignored
	g.Add(at, f.Elem(4))
	log = nil
	answered := false
	for s := g.Next(at); s.Action != firing.Done; s = g.Next(at) {
		switch s.Action {
		case firing.Call:
			log = append(log, "call "+fmtInts(s.Elems))
		case firing.Route:
			log = append(log, "route "+fmtInts([]int{s.Elem})+" "+kinds[s.To])
		case firing.Wait:
			log = append(log, "wait")
			if answered { // for the last call's answer, until the deadline
				at = s.Until
				continue
			}
			answered = true
			g.Answered(at, carried[1], []firing.Result{{Class: clientcall.Success}})
			g.Answered(at, carried[2], []firing.Result{{Class: clientcall.Failed}})
		}
	}
	// Element 0 of g is the throttled one (requeued under Postpone); 3 is
	// the one added, sent at once: one slot of three is free.
	want = []string{"call 3", "wait", "route 1 success", "route 2 error", "wait"}
	if !cmp.Equal(log, want) {
		t.Errorf("second firing: steps %v, want %v", log, want)
	}
	if got, want := g.Requeue(), []int{0}; !cmp.Equal(got, want) {
		t.Errorf("requeue %v, want %v", got, want)
	}
	if got := g.Elem(0).Attempts; got != 1 {
		t.Errorf("a carried element's attempts: %d, want 1 (counted when sent)", got)
	}
	if got, want := g.Flying(), []int{3}; !cmp.Equal(got, want) {
		t.Errorf("flying %v, want %v", got, want)
	}
}

// budget is a policy that sends everything and reports a pace of rate cost
// units a second (Budget), or none if rate is negative.
type budget struct{ rate float64 }

func (budget) Decide(time.Time, int, int) adaptive.Decision {
	return adaptive.Decision{Verdict: adaptive.Send}
}
func (budget) Record(time.Time, adaptive.Answer) {}
func (b budget) Budget(now, until time.Time) int {
	if b.rate < 0 {
		return -1
	}
	return 1 + int(b.rate*until.Sub(now).Seconds())
}

// TestFiringSizeCalls: with SizeCalls the calls under way follow the pace
// at the latency, twice over, under CallsInFlight; the age of the oldest
// call raises the latency before any answer says so.
func TestFiringSizeCalls(t *testing.T) {
	for _, c := range []struct {
		name    string
		rate    float64
		latency time.Duration
		age     time.Duration // of the one call carried
		max     int
		room    int // Env.Room
		want    int // calls sent, the carried one included
	}{
		{"20/s at 2 s", 20, 2 * time.Second, 0, 1000, 0, 81},
		{"under the maximum", 20, 2 * time.Second, 0, 50, 0, 50},
		{"latency not known: a batch interval", 20, 0, 0, 1000, 0, 41},
		{"an old call says more", 20, 0, 1500 * time.Millisecond, 1000, 0, 61},
		{"no pace", -1, time.Second, 0, 7, 0, 7},
		{"a fast API: one call keeps the pace", 20, 40 * time.Millisecond, 0, 1000, 0, 1},
		{"a fast API at a higher pace: still one", 50, 40 * time.Millisecond, 0, 1000, 0, 1},
		{"150 ms at 50/s", 50, 150 * time.Millisecond, 0, 1000, 0, 16},
		{"the driver's ceiling", 20, 2 * time.Second, 0, 1000, 30, 30},
		{"the driver's ceiling, with a carried call", 20, 0, 1500 * time.Millisecond, 1000, 30, 30},
		{"the driver's ceiling, no pace", -1, time.Second, 0, 70, 12, 12},
		{"the driver's ceiling above the pace's need", 20, 2 * time.Second, 0, 1000, 500, 81},
		{"a fast API: the ceiling does not matter", 20, 40 * time.Millisecond, 0, 1000, 30, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := firing.Config{BatchInterval: time.Second, Wait: time.Second, CallsInFlight: c.max, SizeCalls: true, Detach: true}
			f := firing.New(cfg, firing.Env{Policy: budget{c.rate}, Latency: c.latency, Room: c.room}, t0, t0)
			calls := 0
			if c.age > 0 {
				f.Carry(t0.Add(-c.age), []firing.Elem{{Since: t0}}, 0)
				calls++
			}
			for range 2000 {
				f.Add(t0, firing.Elem{Since: t0})
			}
			for s := f.Next(t0); s.Action == firing.Call; s = f.Next(t0) {
				calls++
			}
			if calls != c.want {
				t.Errorf("%d calls under way, want %d", calls, c.want)
			}
		})
	}
}

// probe is a policy with a budget of n calls whatever the time, that lets
// one call through and then postpones, as a pacer probing after a cut does.
type probe struct {
	n    int
	sent bool
}

func (p *probe) Decide(now time.Time, _, _ int) adaptive.Decision {
	if p.sent {
		return adaptive.Decision{Verdict: adaptive.Postpone, RetryAt: now.Add(time.Hour)}
	}
	p.sent = true
	return adaptive.Decision{Verdict: adaptive.Send}
}
func (*probe) Record(time.Time, adaptive.Answer) {}
func (p *probe) Budget(time.Time, time.Time) int { return p.n }

// TestFiringSizeCallsProbe: when the pace allows one call in a latency or
// none (a pacer probing after a cut, a Retry-After), the calls under way
// sent at the pace before do not hold the policy's call back until all of
// them are answered, for a slow API; for a fast one, one call at a time
// stays the bound.
func TestFiringSizeCallsProbe(t *testing.T) {
	for _, c := range []struct {
		name    string
		budget  int
		latency time.Duration
		carried int
		room    int // Env.Room
		want    int // calls sent by the firing
	}{
		{"slow, a budget of one, 40 under way", 1, 2 * time.Second, 40, 0, 1},
		{"slow, a budget of none, 40 under way", 0, 2 * time.Second, 40, 0, 1},
		{"slow, nothing under way", 1, 2 * time.Second, 0, 0, 1},
		{"slow, the driver's ceiling full", 1, 2 * time.Second, 40, 40, 0},
		{"fast, one under way", 1, 40 * time.Millisecond, 1, 0, 0},
		{"fast, nothing under way", 1, 40 * time.Millisecond, 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := firing.Config{BatchInterval: time.Second, Wait: time.Second, CallsInFlight: 256, SizeCalls: true, Detach: true,
				Strategy: firing.Postpone}
			f := firing.New(cfg, firing.Env{Policy: &probe{n: c.budget}, Latency: c.latency, Room: c.room}, t0, t0)
			for range c.carried {
				f.Carry(t0.Add(-c.latency/2), []firing.Elem{{Since: t0}}, 0)
			}
			for range 10 {
				f.Add(t0, firing.Elem{Since: t0})
			}
			calls := 0
			for s := f.Next(t0); s.Action == firing.Call; s = f.Next(t0) {
				calls++
			}
			if calls != c.want {
				t.Errorf("%d calls sent, want %d", calls, c.want)
			}
		})
	}
}
