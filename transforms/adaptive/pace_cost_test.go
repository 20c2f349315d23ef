package adaptive

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// pacerScript drives p through a scripted run from a fixed seed: requests
// asked at irregular times (sometimes at the RetryAt of a postponement,
// sometimes after an idle spell), answers coming back after a delay,
// a fifth of them rejected, some with a Retry-After. ask makes each
// decision. It returns a digest of every decision, rate and budget on the
// way, and the number of sends.
func pacerScript(p *Pacer, seed uint64, steps int, ask func(p *Pacer, now time.Time, inFlight int) Decision) (digest uint64, sends int) {
	src := rand.New(rand.NewPCG(seed, 3))
	h := fnv.New64a()
	word := func(v uint64) { h.Write(binary.LittleEndian.AppendUint64(nil, v)) }
	type pending struct {
		sent, due time.Time
		answer    Answer
	}
	var out []pending
	now := t0
	for range steps {
		switch k := src.IntN(20); {
		case k == 0:
			now = now.Add(5 * time.Second) // idle
		default:
			now = now.Add(time.Duration(src.IntN(30)) * time.Millisecond)
		}
		// Answers due by now come back, oldest first.
		kept := out[:0]
		for _, o := range out {
			if o.due.After(now) {
				kept = append(kept, o)
				continue
			}
			p.Record(o.due, o.answer)
		}
		out = kept
		d := ask(p, now, len(out))
		word(uint64(d.Verdict))
		word(uint64(d.RetryAt.UnixNano()))
		word(math.Float64bits(d.Probability))
		word(math.Float64bits(p.rate))
		word(uint64(p.Budget(now, now.Add(time.Second))))
		if d.Verdict != Send {
			if src.IntN(2) == 0 {
				now = d.RetryAt
			}
			continue
		}
		sends++
		a := Answer{Outcome: Accepted, Sent: now}
		switch src.IntN(10) {
		case 0:
			a.Outcome = Throttled
		case 1:
			a.Outcome, a.RetryAfter = Throttled, time.Duration(1+src.IntN(3))*time.Second
		case 2:
			a.Outcome = Failed
		}
		out = append(out, pending{sent: now, due: now.Add(time.Duration(src.IntN(200)) * time.Millisecond), answer: a})
	}
	return h.Sum64(), sends
}

// TestPacerCostOne: with every cost 1, Decide decides, directly and
// through NewShared, as the Pacer did before costs: the digests of the
// scripted runs were first recorded with the Pacer of commit f42c1ac, which
// had only Decide, and recorded again when the steady ceiling changed the
// curve, and when a cut came from the rate at the rejected request's send
// time, the dark spell's probes counted only requests sent since the cut,
// the curve's time scale followed the latency, and a steady ceiling
// forgave a little lateness and kept through a lone refusal, and a refusal
// below a slow API's steady ceiling kept it steady while requests sent
// since the cut were accepted, and a slow API's rare refusals at its
// steady ceiling passed as jitter and its slow start ended at the rate of
// the latest accepted send, with a narrower margin below it, and a short
// Retry-After blocked whatever the send of its request, and when the
// ablation removed the rules whose removal moved no cell of the crossed
// grid and no row of make sim (both paths still agree on each).
func TestPacerCostOne(t *testing.T) {
	configs := []PacerConfig{
		{},
		{StartRate: 50, Beta: 0.7, Backoff: 0.5},
		{StartRate: 2, MinRate: 1, Recover: time.Second, Groups: 4},
	}
	golden := []struct {
		seed   uint64
		config int
		digest uint64
		sends  int
	}{
		{1, 0, 0x4b99bea3050865e6, 1688},
		{1, 1, 0x798b265263fe106b, 1681},
		{1, 2, 0x2677e34fb6794b54, 1698},
		{2, 0, 0x7151d5f56afd0f34, 1704},
		{2, 1, 0xc10612501a32f869, 1692},
		{2, 2, 0xff5b99667ee2bbee, 1692},
		{3, 0, 0x80e20d12dc864bf, 1710},
		{3, 1, 0x1461a0fa1ec1a200, 1706},
		{3, 2, 0xfecc3044b1df1e7, 1708},
	}
	asks := []struct {
		name string
		ask  func(p *Pacer, now time.Time, inFlight int) Decision
	}{
		{"Decide", func(p *Pacer, now time.Time, inFlight int) Decision { return p.Decide(now, inFlight, 1) }},
		{"Shared", func(p *Pacer, now time.Time, inFlight int) Decision { return NewShared(p).Decide(now, inFlight, 1) }},
	}
	for _, g := range golden {
		for _, a := range asks {
			t.Run(fmt.Sprintf("%s/seed %d/config %d", a.name, g.seed, g.config), func(t *testing.T) {
				p := newTestPacer(t, configs[g.config])
				digest, sends := pacerScript(p, g.seed, 5000, a.ask)
				if digest != g.digest || sends != g.sends {
					t.Errorf("got digest %#x after %d sends, want %#x after %d", digest, sends, g.digest, g.sends)
				}
				if p.unit != 1 {
					t.Errorf("got unit %v, want 1", p.unit)
				}
			})
		}
	}
}

// flatPacer returns a Pacer whose rate is all but constant for hours: one
// request of cost first, a decrease to half the slow-start rate
// (50 × first units per second), then an accept, after which the cubic
// curve climbs back over a Recover of ten thousand hours.
func flatPacer(t *testing.T, first int) *Pacer {
	t.Helper()
	p := newTestPacer(t, PacerConfig{StartRate: 100, Beta: 0.5, Recover: 10000 * time.Hour})
	if d := p.Decide(at(0), 0, first); d.Verdict != Send {
		t.Fatalf("first decision %+v, want Send", d)
	}
	p.Record(at(0), Answer{Outcome: Throttled, Sent: at(0)})
	p.Record(at(0), Answer{Outcome: Accepted, Sent: at(0)})
	if got, want := p.rate, 50.0*float64(first); math.Abs(got-want) > 1e-9*want {
		t.Fatalf("got rate %v, want %v", got, want)
	}
	return p
}

// TestPacerPacesCost: a Pacer lets through cost units at its rate, whatever
// the mix of costs: asked at every RetryAt for ten minutes of scripted time, it
// spaces each request by its own cost over the rate, and the cost it lets
// through is rate × the time.
func TestPacerPacesCost(t *testing.T) {
	const span = 10 * time.Minute
	uniform := rand.New(rand.NewPCG(4, 5))
	tests := []struct {
		name string
		cost func(i int) int
	}{
		{"uniform 1-100", func(int) int { return 1 + uniform.IntN(100) }},
		{"all 50", func(int) int { return 50 }},
		{"1 and 99 alternately", func(i int) int { return 1 + 98*(i%2) }},
		{"runs of 20 of 1 then 20 of 100", func(i int) int { return 1 + 99*(i/20%2) }},
		{"all 1", func(int) int { return 1 }},
	}
	var totals []int
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := flatPacer(t, 50) // the same rate in every case
			rate := p.rate
			now, total, sends := at(0), 0, 0
			var last time.Time
			var lastCost int
			var lastRate float64
			for i := 0; now.Before(at(span)); {
				c := tc.cost(i)
				d := p.Decide(now, 0, c)
				if d.Verdict == Postpone {
					now = d.RetryAt
					continue
				}
				if d.Verdict != Send {
					t.Fatalf("decision %d: %v, want Send or Postpone", i, d.Verdict)
				}
				if sends > 0 {
					// The gap after a request is its cost at the rate then,
					// to the nanosecond.
					gap := now.Sub(last)
					if want := time.Duration(1e9 * float64(lastCost) / lastRate); gap < want || gap > want+time.Nanosecond {
						t.Fatalf("send %d: gap %v after a request of cost %d at %v units/s, want %v", sends, gap, lastCost, lastRate, want)
					}
				}
				p.Record(now, Answer{Outcome: Accepted, Sent: now})
				last, lastCost, lastRate = now, c, p.rate
				total += c
				sends++
				i++
			}
			// The rate climbs by 5e-5 of itself in ten minutes.
			want := rate * span.Seconds()
			if math.Abs(float64(total)-want) > 0.01*want {
				t.Errorf("got %d cost units in %v in %d requests, want %v (rate %v × %vs) within 1%%", total, span, sends, want, rate, span.Seconds())
			}
			totals = append(totals, total)
		})
	}
	for i, tot := range totals {
		if math.Abs(float64(tot-totals[0])) > 0.01*float64(totals[0]) {
			t.Errorf("case %q let %d cost units through, case %q %d: want the same within 1%%", tests[i].name, tot, tests[0].name, totals[0])
		}
	}
}

// TestPacerSlowStartScaled: slow start begins at StartRate × the unit, so a
// Pacer whose requests all cost c sends them at the times a Pacer of
// requests of cost 1 does, at c times its rate.
func TestPacerSlowStartScaled(t *testing.T) {
	sends := func(p *Pacer, cost int) []time.Duration {
		var sent []time.Duration
		for d := time.Duration(0); d < 3*time.Second; d += time.Millisecond {
			if p.Decide(at(d), 0, cost).Verdict == Send {
				sent = append(sent, d)
			}
		}
		return sent
	}
	ref := newTestPacer(t, PacerConfig{StartRate: 4})
	want := sends(ref, 1)
	if n := len(want); n < 35 || n > 45 {
		t.Fatalf("got %d sends of cost 1 in 3s of slow start from 4/s, want about 40", n)
	}
	for _, cost := range []int{1, 7, 100, 12345} {
		t.Run(fmt.Sprint(cost), func(t *testing.T) {
			p := newTestPacer(t, PacerConfig{StartRate: 4})
			if got := sends(p, cost); !slices.Equal(got, want) {
				t.Errorf("got sends at %v, want %v", got, want)
			}
			if got, want := p.rate, float64(cost)*ref.rate; math.Abs(got-want) > 1e-9*want {
				t.Errorf("got rate %v, want %v (%d × %v)", got, want, cost, ref.rate)
			}
		})
	}
}

// TestPacerFloorScaled: the rate falls no lower than MinRate × the unit,
// and a probe of a backend that rejects everything is retried unit/rate
// later.
func TestPacerFloorScaled(t *testing.T) {
	for _, cost := range []int{1, 10, 1000} {
		t.Run(fmt.Sprint(cost), func(t *testing.T) {
			p := newTestPacer(t, PacerConfig{StartRate: 1, MinRate: 0.5, Beta: 0.5, Backoff: 0.1})
			p.Decide(at(0), 0, cost)
			for i := range 5 { // rejected through five decreases
				s := at(time.Duration(i) * time.Second)
				p.Record(s, Answer{Outcome: Throttled, Sent: s})
			}
			if got, want := p.rate, 0.5*float64(cost); got != want {
				t.Fatalf("got rate %v, want MinRate × unit = %v", got, want)
			}
			// The probe goes at its slot; asked while it is unanswered, the
			// Pacer says to ask again a typical request's slot later, 2s.
			if d := p.Decide(at(10*time.Second), 0, cost); d.Verdict != Send {
				t.Fatalf("probe: %+v, want Send", d)
			}
			if d := p.Decide(at(11*time.Second), 0, cost); d.Verdict != Postpone || !d.RetryAt.Equal(at(12*time.Second)) {
				t.Fatalf("before the probe's spacing: %+v, want Postpone until 12s", d)
			}
			if d := p.Decide(at(12*time.Second), 0, cost); d.Verdict != Postpone || !d.RetryAt.Equal(at(14*time.Second)) {
				t.Errorf("while the probe is unanswered: %+v, want Postpone until 14s", d)
			}
		})
	}
}

// TestPacerUnit: the unit is the first request's cost, then a moving
// average weighing each request let through by 1/8; free requests and
// postponed ones do not move it.
func TestPacerUnit(t *testing.T) {
	tests := []struct {
		name  string
		costs []int
		want  float64
	}{
		{"none", nil, 0},
		{"first", []int{40}, 40},
		{"free after", []int{40, 0}, 40},
		{"free only", []int{0, 0}, 0},
		{"negative is free", []int{-3, 16}, 16},
		{"average", []int{8, 16}, 9},          // 8 + (16−8)/8
		{"average on", []int{8, 16, 0, 1}, 8}, // 9 + (1−9)/8
		{"ones", []int{1, 1, 1, 1, 1, 1}, 1},  // as Decide's
		{"large", []int{1 << 40}, 1 << 40},    // no limit short of MaxInt64
		{"largest", []int{math.MaxInt64}, 1 << 63},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPacer(t, PacerConfig{StartRate: 10})
			now := at(0)
			for i, c := range tc.costs {
				d := p.Decide(now, 0, c)
				if d.Verdict == Postpone {
					now = d.RetryAt
					d = p.Decide(now, 0, c)
				}
				if d.Verdict != Send {
					t.Fatalf("request %d: %+v, want Send", i, d)
				}
				p.Record(now, Answer{Outcome: Accepted, Sent: now})
			}
			if p.unit != tc.want {
				t.Errorf("got unit %v, want %v", p.unit, tc.want)
			}
		})
	}
	// Postponed requests do not move the unit.
	p := newTestPacer(t, PacerConfig{StartRate: 10})
	p.Decide(at(0), 0, 4)
	for i := range 10 {
		if d := p.Decide(at(time.Duration(i)*time.Millisecond), 0, 1000); d.Verdict != Postpone {
			t.Fatalf("decision %d before the slot: %+v, want Postpone", i, d)
		}
	}
	if p.unit != 4 {
		t.Errorf("got unit %v after postponed requests of cost 1000, want 4", p.unit)
	}
}

// TestPacerFreeRequest: a request of cost 0, or less, waits for its slot
// like any other but leaves the next slot where it was.
func TestPacerFreeRequest(t *testing.T) {
	for _, free := range []int{0, -7} {
		t.Run(fmt.Sprint(free), func(t *testing.T) {
			p := newTestPacer(t, PacerConfig{StartRate: 10})
			p.Decide(at(0), 0, 5) // 50 units/s: the next slot is at 100ms
			if d := p.Decide(at(50*time.Millisecond), 0, free); d.Verdict != Postpone || !d.RetryAt.Equal(at(100*time.Millisecond)) {
				t.Fatalf("free request before the slot: %+v, want Postpone until 100ms", d)
			}
			for i := range 3 {
				if d := p.Decide(at(100*time.Millisecond), 0, free); d.Verdict != Send {
					t.Fatalf("free request %d at the slot: %+v, want Send", i, d)
				}
			}
			if d := p.Decide(at(100*time.Millisecond), 0, 5); d.Verdict != Send {
				t.Errorf("request of cost 5 after free ones at the same slot: %+v, want Send", d)
			}
			if d := p.Decide(at(100*time.Millisecond), 0, 5); d.Verdict != Postpone {
				t.Errorf("second request of cost 5 at the same slot: %+v, want Postpone", d)
			}
		})
	}
}

// TestPacerBudgetCost: the budget is in cost units: the unit, rounded up,
// at the first slot, then rate × the time after it.
func TestPacerBudgetCost(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 10})
	if got := p.Budget(at(0), at(time.Second)); got != 1 {
		t.Errorf("budget before the first request: %d, want 1", got)
	}
	p.Decide(at(0), 0, 20) // unit 20, 200 units/s: the next slot is at 100ms
	tests := []struct {
		now, until time.Duration
		want       int
	}{
		{0, 50 * time.Millisecond, 0},
		{0, 100 * time.Millisecond, 20},
		{0, 350 * time.Millisecond, 70}, // 20 at 100ms, then 200/s × 250ms
		{0, 354 * time.Millisecond, 70}, // rounded down
		{0, 355 * time.Millisecond, 71},
		{time.Second, time.Second, 20},
		{time.Second, 2 * time.Second, 220},
	}
	for _, tc := range tests {
		if got := p.Budget(at(tc.now), at(tc.until)); got != tc.want {
			t.Errorf("Budget(%v, %v) = %d, want %d", tc.now, tc.until, got, tc.want)
		}
	}
	p.Decide(at(time.Second), 0, 24) // unit 20.5
	if got, want := p.Budget(at(time.Hour), at(time.Hour)), 21; got != want {
		t.Errorf("budget of one slot with unit %v: %d, want %d", p.unit, got, want)
	}
	// Dark: one probe, none while it is unanswered.
	p.Record(at(time.Second), Answer{Outcome: Throttled, Sent: at(time.Second)})
	p.Record(at(time.Second), Answer{Outcome: Throttled, Sent: at(time.Second)})
	if got := p.Budget(at(time.Hour), at(2*time.Hour)); got != 21 {
		t.Errorf("budget while dark: %d, want 21", got)
	}
	p.Decide(at(time.Hour), 0, 24)
	if got := p.Budget(at(time.Hour), at(2*time.Hour)); got != 0 {
		t.Errorf("budget while a probe is unanswered: %d, want 0", got)
	}
}

// TestPacerStateUnit: the unit is saved and restored with the rest of the
// state.
func TestPacerStateUnit(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 10})
	now := at(0)
	for i := range 200 {
		d := p.Decide(now, 0, 1+i%37)
		if d.Verdict == Postpone {
			now = d.RetryAt
			continue
		}
		p.Record(now, Answer{Outcome: Outcome(i % 3), Sent: now})
	}
	if p.unit <= 1 {
		t.Fatalf("got unit %v, want the average cost", p.unit)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0x25 {
		t.Errorf("got version %#x, want 0x25", b[0])
	}
	q := newTestPacer(t, PacerConfig{StartRate: 10})
	if err := q.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q, p) {
		t.Errorf("restored %+v, want %+v", *q, *p)
	}
	for i := range 50 {
		later := now.Add(time.Duration(i) * 7 * time.Millisecond)
		if a, b := p.Decide(later, 0, 30), q.Decide(later, 0, 30); a != b {
			t.Fatalf("decision %d differs after the round trip: %+v and %+v", i, a, b)
		}
	}
}

// pacerState2 is a Pacer's state of version 0x22, before costs, as the Pacer
// of commit f42c1ac saved it after the run of TestPacerStateRoundTrip.
const pacerState2 = "22030000000000002240000000000000244000000000000024400016d02452728618c762653152728618806b98455272861800ca9429527286180000faed51728618010000000000000030000000000000003200000000000000010000000000000000f7c52a52728618"

// TestPacerReadsVersion2: the state saved before costs is read with the
// unit not known yet, which behaves as 1 until a request with a cost sets
// it.
func TestPacerReadsVersion2(t *testing.T) {
	old, err := hex.DecodeString(pacerState2)
	if err != nil {
		t.Fatal(err)
	}
	// The same run, with today's Pacer.
	want := newTestPacer(t, PacerConfig{StartRate: 10})
	for i := range 50 {
		now := at(time.Duration(i) * 30 * time.Millisecond)
		if want.Decide(now, 0, 1).Verdict == Send && i%7 == 0 {
			want.Record(now, Answer{Outcome: Throttled, Sent: now, RetryAfter: 2 * time.Second})
		}
	}
	want.unit = 0
	want.lat, want.probes = 0, 0                      // not known before version 0x24
	want.answers, want.refused, want.okSent = 0, 0, 0 // nor before 0x25
	p := newTestPacer(t, PacerConfig{StartRate: 10})
	if err := p.UnmarshalBinary(old); err != nil {
		t.Fatalf("UnmarshalBinary of version 0x22: %v", err)
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("restored %+v, want %+v", *p, *want)
	}
	// Unit 0 behaves as 1.
	ones := *p
	ones.unit = 1
	for i := range 100 {
		now := at(2*time.Second + time.Duration(i)*10*time.Millisecond)
		a, b := p.Decide(now, 0, 1), ones.Decide(now, 0, 1)
		if a != b {
			t.Fatalf("decision %d with unit 0: %+v, with unit 1: %+v", i, a, b)
		}
		if a.Verdict == Send {
			p.Record(now, Answer{Outcome: Accepted, Sent: now})
			ones.Record(now, Answer{Outcome: Accepted, Sent: now})
		}
	}
	// Saved again, it is of this version and keeps its unit.
	b, _ := p.MarshalBinary()
	if b[0] != 0x25 || len(b) != len(old)+48 {
		t.Errorf("saved again: version %#x, %d bytes, want 0x25, %d", b[0], len(b), len(old)+48)
	}
	// The first request with a cost sets the unit.
	q := newTestPacer(t, PacerConfig{StartRate: 10})
	if err := q.UnmarshalBinary(old); err != nil {
		t.Fatal(err)
	}
	now := at(time.Hour)
	for q.Decide(now, 0, 30).Verdict != Send {
		now = now.Add(time.Second)
	}
	if q.unit != 30 {
		t.Errorf("got unit %v after a request of cost 30, want 30", q.unit)
	}
}

// TestPacerUnmarshalRefusesUnit: state no Pacer could have saved is
// refused: a unit that is not 0 or an average of costs of at least 1,
// flags no Pacer sets, and the length of one version under the byte of
// the other.
func TestPacerUnmarshalRefusesUnit(t *testing.T) {
	p := newTestPacer(t, PacerConfig{})
	p.Decide(at(0), 0, 3)
	good, _ := p.MarshalBinary()
	withUnit := func(u float64) []byte {
		b := slices.Clone(good)
		binary.LittleEndian.PutUint64(b[len(b)-48:], math.Float64bits(u)) // before the latency, the probes, the answers, the refusals and the latest accepted send
		return b
	}
	set := func(i int, v byte, b []byte) []byte { b = slices.Clone(b); b[i] = v; return b }
	old, _ := hex.DecodeString(pacerState2)
	v3 := set(0, 0x23, good[:len(good)-40])
	v4 := set(0, 0x24, good[:len(good)-24])
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"valid", good, nil},
		{"unit 0", withUnit(0), nil},
		{"unit 1", withUnit(1), nil},
		{"largest unit", withUnit(1 << 63), nil},
		{"version 0x22", old, nil},
		{"version 0x23", v3, nil},
		{"version 0x24", v4, nil},
		{"negative latency", append(append(slices.Clone(good[:len(good)-40]), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), make([]byte, 32)...), ErrState},
		{"more refusals than answers", append(append(slices.Clone(good[:len(good)-24]), 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0), make([]byte, 8)...), ErrState},
		{"unit NaN", withUnit(math.NaN()), ErrState},
		{"unit +Inf", withUnit(math.Inf(1)), ErrState},
		{"unit above the largest cost", withUnit(1 << 64), ErrState},
		{"unit negative", withUnit(-1), ErrState},
		{"unit below 1", withUnit(0.5), ErrState},
		{"unknown flag", set(1, 32|1, good), ErrState},
		{"accepted ceiling in 0x24", set(1, 16|1, v4), ErrState},
		{"unknown flag in 0x22", set(1, 0x80|1, old), ErrState},
		{"0x22 of this version's length", set(0, 0x22, good), ErrState},
		{"0x23 of version 0x22's length", set(0, 0x23, old), ErrState},
		{"version 0x26", set(0, 0x26, good), ErrState},
		{"0x24 of this version's length", set(0, 0x24, good), ErrState},
		{"0x23 of this version's length", set(0, 0x23, good), ErrState},
		{"one byte more", append(slices.Clone(good), 0), ErrState},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newTestPacer(t, PacerConfig{})
			q.Decide(at(0), 0, 1)
			err := q.UnmarshalBinary(tc.data)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil && !reflect.DeepEqual(*q, Pacer{cfg: q.cfg}) {
				t.Errorf("refused state left %+v, want the pacer reset", *q)
			}
		})
	}
}
