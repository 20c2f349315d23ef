package throttle

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// These tests call the stateful step's logic directly, without a runner:
// the firing (routing, strategies), taking from the queue, shedding, and
// the batch coder. The Prism tests check the whole.

// scriptPolicy is an adaptive.Policy that answers Decide from a script
// (Send once the script is used up), so a test chooses every verdict.
type scriptPolicy struct {
	script   []adaptive.Verdict
	p        float64
	retryAt  time.Time
	recorded []adaptive.Outcome
	costs    []int // the cost of each decision
}

// Decide records the cost and answers from the script.
func (s *scriptPolicy) Decide(_ time.Time, _, cost int) adaptive.Decision {
	s.costs = append(s.costs, cost)
	if len(s.script) == 0 {
		return adaptive.Decision{Verdict: adaptive.Send}
	}
	v := s.script[0]
	s.script = s.script[1:]
	d := adaptive.Decision{Verdict: v, Probability: s.p}
	if v == adaptive.Postpone {
		d.RetryAt = s.retryAt
	}
	return d
}

func (s *scriptPolicy) Record(_ time.Time, a adaptive.Answer) {
	s.recorded = append(s.recorded, a.Outcome)
}
func (s *scriptPolicy) Budget(time.Time, time.Time) int { return -1 }
func (s *scriptPolicy) MarshalBinary() ([]byte, error)  { return nil, nil }
func (s *scriptPolicy) UnmarshalBinary([]byte) error    { return nil }

// outs collects what a firing emits.
type outs struct {
	ok           [][]byte
	ct, st, errs []Record
}

func (o *outs) emitters() emitters {
	return emitters{
		ok:   func(_ *item, b []byte) { o.ok = append(o.ok, b) },
		ct:   func(r Record) { o.ct = append(o.ct, r) },
		st:   func(r Record) { o.st = append(o.st, r) },
		errs: func(r Record) { o.errs = append(o.errs, r) },
	}
}

// t0 is the fixed wall clock of the tests' firings.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testFiring returns a firing of group "g" at t0 with a stopped clock, the
// caller mixCaller (by the payload's last digit: 0-5 success, 6-7 429 with
// Retry-After 1s, 8 HTTP 400, 9 panic) and policy p.
func testFiring(f *throttleFn, p adaptive.Policy, o *outs) *driver {
	f.BatchSize = max(f.BatchSize, 10)
	f.BatchInterval = time.Second
	f.CallTimeout = time.Minute
	f.CallsInFlight = max(f.CallsInFlight, 1)
	f.MaxAttempts = max(f.MaxAttempts, 3)
	f.MaxAge = time.Hour
	f.invoker = newInvoker(reflect.ValueOf(mixCaller{}), bytesType, bytesType, false)
	f.policy = p
	fr := f.newFiring(context.Background(), "g", t0, o.emitters())
	fr.wall = t0
	fr.clock = func() time.Time { return t0 }
	return fr
}

func items(payloads ...string) []item {
	out := make([]item, len(payloads))
	for i, p := range payloads {
		out[i] = item{Payload: []byte(p), Since: t0.UnixNano()}
	}
	return out
}

// counts is what a firing did with its elements.
type counts struct {
	OK, CT, ST, Errs, Dropped, Requeued, Rest int
}

func countsOf(fr *driver, o *outs) counts {
	return counts{
		OK: len(o.ok), CT: len(o.ct), ST: len(o.st), Errs: len(o.errs), Dropped: int(fr.t.dropped),
		Requeued: len(fr.requeue), Rest: len(fr.rest),
	}
}

func TestFiringRoutes(t *testing.T) {
	send, rej, post := adaptive.Send, adaptive.Reject, adaptive.Postpone
	for _, c := range []struct {
		name     string
		strategy Strategy
		attempts int // attempts each element already had
		payloads []string
		script   []adaptive.Verdict
		want     counts
	}{
		{"route: success, 429, 400, panic", Route, 0, []string{"x0", "x6", "x8", "x9"}, nil,
			counts{OK: 1, ST: 1, Errs: 2}},
		{"route: rejected", Route, 0, []string{"x0", "x0"}, []adaptive.Verdict{rej, send}, counts{OK: 1, CT: 1}},
		{"drop: 429 and rejected are dropped, errors are not", Drop, 0, []string{"x6", "x0", "x8"},
			[]adaptive.Verdict{send, rej, send}, counts{Errs: 1, Dropped: 2}},
		{"retry: 429 and rejected go back", Retry, 0, []string{"x6", "x0"}, []adaptive.Verdict{send, rej},
			counts{Requeued: 2}},
		{"retry: out of attempts", Retry, 2, []string{"x6", "x0"}, []adaptive.Verdict{send, rej},
			counts{ST: 1, CT: 1}},
		{"postpone: 429 goes back", Postpone, 5, []string{"x6", "x7"}, nil, counts{Requeued: 2}},
		{"postpone beyond the firing: the rest stays queued", Postpone, 0, []string{"x0", "x0", "x0"},
			[]adaptive.Verdict{send, post}, counts{OK: 1, Rest: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o outs
			p := &scriptPolicy{script: c.script, p: 0.5, retryAt: t0.Add(time.Hour)}
			fr := testFiring(&throttleFn{settings: settings{Strategy: c.strategy}}, p, &o)
			its := items(c.payloads...)
			for i := range its {
				its[i].Attempts = c.attempts
			}
			fr.run(its)
			if got := countsOf(fr, &o); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if calls := len(o.ok) + len(o.st) + len(o.errs) + len(fr.requeue) + int(fr.t.dropped); len(p.recorded) > calls {
				t.Errorf("policy told of %d answers, more than %d elements routed", len(p.recorded), calls)
			}
		})
	}
}

func TestFiringRecords(t *testing.T) {
	var o outs
	p := &scriptPolicy{script: []adaptive.Verdict{adaptive.Reject}, p: 0.25}
	fr := testFiring(&throttleFn{settings: settings{Strategy: Route}}, p, &o)
	fr.run(items("x0", "x6", "x8"))
	us := t0.UnixMicro()
	want := struct{ CT, ST, Errs []Record }{
		CT: []Record{{Input: []byte("x0"), Error: clientThrottledMessage(0.25), Outcome: OutcomeClientThrottled,
			Probability: 0.25, Attempts: 1, Group: "g", FirstAttempt: us, LastAttempt: us}},
		ST: []Record{{Input: []byte("x6"), Error: "Server returned HTTP response code: 429", Outcome: OutcomeServerThrottled,
			StatusCode: 429, Attempts: 1, Group: "g", FirstAttempt: us, LastAttempt: us, RetryAfter: 1000}},
		Errs: []Record{{Input: []byte("x8"), Error: (&clientcall.StatusError{StatusCode: 400}).Error(), Outcome: OutcomeError, StatusCode: 400,
			Attempts: 1, Group: "g", FirstAttempt: us, LastAttempt: us}},
	}
	got := struct{ CT, ST, Errs []Record }{o.ct, o.st, o.errs}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
}

func TestFiringRetryKeepsLastFailure(t *testing.T) {
	var o outs
	fr := testFiring(&throttleFn{settings: settings{Strategy: Retry}}, &scriptPolicy{}, &o)
	fr.run(items("x6"))
	if len(fr.requeue) != 1 {
		t.Fatalf("requeued %d, want 1", len(fr.requeue))
	}
	it := fr.requeue[0]
	if it.Last.Outcome != OutcomeServerThrottled || it.Last.Status != 429 {
		t.Errorf("last failure %+v, want server-throttled 429", it.Last)
	}
	// No sooner than the larger of Retry-After (1s) and the batch interval (1s).
	if want := t0.Add(time.Second).UnixNano(); it.NotBefore != want {
		t.Errorf("NotBefore %v, want %v", time.Unix(0, it.NotBefore), time.Unix(0, want))
	}
	// Expired later, it keeps its last outcome.
	var o2 outs
	fr2 := testFiring(&throttleFn{settings: settings{Strategy: Retry, Settings: firing.Settings{MaxWait: time.Minute}}}, &scriptPolicy{}, &o2)
	fr2.clock = func() time.Time { return t0.Add(time.Hour) }
	fr2.run([]item{it})
	if got := countsOf(fr2, &o2); got != (counts{ST: 1}) {
		t.Errorf("expired: got %+v, want one ServerThrottled", got)
	}
}

func TestFiringExpires(t *testing.T) {
	for _, c := range []struct {
		strategy Strategy
		want     counts
	}{
		{Route, counts{CT: 1, OK: 1}},
		{Postpone, counts{CT: 1, OK: 1}},
		{Drop, counts{Dropped: 1, OK: 1}},
	} {
		t.Run(string(c.strategy), func(t *testing.T) {
			var o outs
			fr := testFiring(&throttleFn{settings: settings{Strategy: c.strategy, Settings: firing.Settings{MaxWait: time.Minute}}}, &scriptPolicy{}, &o)
			its := items("x0", "x0")
			its[0].Since = t0.Add(-2 * time.Minute).UnixNano() // waited too long
			fr.run(its)
			if got := countsOf(fr, &o); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			for _, r := range o.ct {
				if !strings.Contains(r.Error, "Waited longer than the max wait (1m0s)") || r.Probability != 1 {
					t.Errorf("record %+v, want the max wait's", r)
				}
			}
		})
	}
}

func TestShed(t *testing.T) {
	for _, c := range []struct {
		name        string
		strategy    Strategy
		max         int
		queued, add int
		kept        int
		want        counts
	}{
		{"no bound", Route, 0, 100, 5, 5, counts{}},
		{"room for all", Route, 10, 5, 5, 5, counts{}},
		{"route", Route, 10, 8, 5, 2, counts{CT: 3}},
		{"retry", Retry, 10, 8, 5, 2, counts{CT: 3}},
		{"postpone", Postpone, 10, 8, 5, 2, counts{CT: 3}},
		{"drop", Drop, 10, 8, 5, 2, counts{Dropped: 3}},
		{"already over", Route, 10, 12, 5, 0, counts{CT: 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o outs
			fr := testFiring(&throttleFn{settings: settings{Strategy: c.strategy, MaxBuffered: c.max}}, &scriptPolicy{}, &o)
			payloads := make([]string, c.add)
			for i := range payloads {
				payloads[i] = fmt.Sprintf("x%d", i)
			}
			kept := fr.shed(t0, items(payloads...), int64(c.queued))
			if len(kept) != c.kept {
				t.Errorf("kept %d, want %d", len(kept), c.kept)
			}
			if got := countsOf(fr, &o); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			for _, r := range o.ct {
				want := fmt.Sprintf("Throttled by Client. Group buffer full (%d elements)", c.max)
				if r.Error != want || r.Outcome != OutcomeClientThrottled || r.Group != "g" || r.FirstAttempt != t0.UnixMicro() {
					t.Errorf("record %+v, want %q in group g", r, want)
				}
			}
		})
	}
}

func TestTakeEligible(t *testing.T) {
	at := func(ns ...int64) []item {
		out := make([]item, len(ns))
		for i, n := range ns {
			out[i] = item{Payload: []byte{byte('a' + i)}, NotBefore: n}
		}
		return out
	}
	names := func(its []item) string {
		var b strings.Builder
		for _, it := range its {
			b.Write(it.Payload)
		}
		return b.String()
	}
	for _, c := range []struct {
		name        string
		from        []item
		n           int
		fire        int64
		taken, rest string
	}{
		{"all", at(0, 0, 0), 5, 10, "abc", ""},
		{"up to n", at(0, 0, 0), 2, 10, "ab", "c"},
		{"not yet eligible stay, in order", at(20, 0, 30, 0), 5, 10, "bd", "ac"},
		{"eligible at the firing time", at(10), 1, 10, "a", ""},
		{"none", nil, 3, 10, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			taken, rest := takeEligible(nil, c.from, c.n, c.fire)
			if names(taken) != c.taken || names(rest) != c.rest {
				t.Errorf("took %q left %q, want %q and %q", names(taken), names(rest), c.taken, c.rest)
			}
		})
	}
}

func TestBatchCoder(t *testing.T) {
	for _, b := range []batch{
		{},
		{Items: []item{{Payload: []byte("x")}}},
		{Items: []item{
			{Payload: []byte{}, Attempts: 3, First: 1, NotBefore: -2, Since: 1 << 60},
			{Payload: []byte{0, 0xff}, Last: failure{Outcome: OutcomeServerThrottled, Error: "é", Status: 429, GRPC: 8, Prob: 0.5, RetryAfter: 1500}},
		}},
		{Items: []item{
			{Payload: []byte("m"), MessageID: "id-1", AckID: "ack-1", Attributes: map[string]string{"attempts": "2", "": ""}, Prior: 2},
			{Payload: []byte("n"), AckID: "ack-2", Attributes: map[string]string{}, Cost: 100},
		}},
		{Items: []item{{Payload: []byte("c"), Cost: 1 << 40}, {Payload: []byte("d"), Cost: 7}}},
		{Items: []item{{Payload: []byte("e"), CacheKey: "beamthrottle:cache:0011:ab", Tier: tierHigh},
			{Payload: []byte("f"), Tier: tierLow}, {Payload: []byte("g")}}},
	} {
		enc, err := encodeBatch(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeBatch(enc)
		if err != nil {
			t.Fatalf("decode %x: %v", enc, err)
		}
		if d := cmp.Diff(b, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
		// Every truncation is an error, never a panic.
		for n := range enc {
			if _, err := decodeBatch(enc[:n]); err == nil {
				t.Errorf("decode of %x (cut at %d) succeeded", enc[:n], n)
			}
		}
	}
	// Version 1, without Message metadata, is still read.
	v1 := []byte{1, 1, 1, 'x', 2, 0, 0, 0, 0}
	if got, err := decodeBatch(v1); err != nil || cmp.Diff(batch{Items: []item{{Payload: []byte("x"), Attempts: 1}}}, got) != "" {
		t.Errorf("decode version 1 %x: got %+v, %v", v1, got, err)
	}
	// Version 2, without cost, is still read: its items cost 1.
	v2 := []byte{2, 1, 1, 'x', 2, 0, 0, 0, 0, 0}
	if got, err := decodeBatch(v2); err != nil || cmp.Diff(batch{Items: []item{{Payload: []byte("x"), Attempts: 1}}}, got) != "" || got.Items[0].cost() != 1 {
		t.Errorf("decode version 2 %x: got %+v, %v", v2, got, err)
	}
	// Version 4, without a priority tier, is still read: its items are
	// normal.
	v4 := []byte{4, 1, 1, 'x', 2, 0, 0, 0, 0, 0, 0, 0}
	if got, err := decodeBatch(v4); err != nil || cmp.Diff(batch{Items: []item{{Payload: []byte("x"), Attempts: 1}}}, got) != "" {
		t.Errorf("decode version 4 %x: got %+v, %v", v4, got, err)
	}
	// A tier out of range is refused.
	bad, _ := encodeBatch(batch{Items: []item{{Payload: []byte("x"), Tier: 2}}})
	if _, err := decodeBatch(bad); err == nil {
		t.Errorf("decode of a tier out of range succeeded")
	}
	if _, err := decodeBatch([]byte{batchVersion + 1, 0}); err == nil || errors.Is(err, errBatch) {
		t.Errorf("unknown version: got %v, want a version error", err)
	}
}

// gateCaller blocks on payloads "hang" until gate is closed, ignoring its
// context, and echoes the others.
type gateCaller struct{ gate chan struct{} }

func (c gateCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	if string(req) == "hang" {
		<-c.gate
	}
	return req, nil
}

// TestFiringAbandonsHungCall: with one call in flight the firing makes its
// calls itself; a call that outlives the timeout is abandoned, its element
// goes to Errors, and the firing goes on with the next elements.
func TestFiringAbandonsHungCall(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	var o outs
	f := &throttleFn{settings: settings{Strategy: Route}}
	fr := testFiring(f, &scriptPolicy{}, &o)
	f.CallTimeout = 10 * time.Millisecond
	f.invoker = newInvoker(reflect.ValueOf(gateCaller{gate: gate}), bytesType, bytesType, false)
	fr.run(items("a", "hang", "b", "hang", "c"))
	if got, want := countsOf(fr, &o), (counts{OK: 3, Errs: 2}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for _, r := range o.errs {
		if string(r.Input) != "hang" || r.Error != (&timeoutError{Timeout: f.CallTimeout}).Error() {
			t.Errorf("record %+v, want the timeout of a hung call", r)
		}
	}
	if want := []string{"a", "b", "c"}; fmt.Sprint(bytesToStrings(o.ok)) != fmt.Sprint(want) {
		t.Errorf("successes %q, want %q in order", bytesToStrings(o.ok), want)
	}
}

func bytesToStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}
