package throttle

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// mixBatchCaller is mixCaller in batches: an item fails alone as mixCaller
// fails it (a *clientcall.BatchError), except that a payload "all429" makes
// the whole call answer 429 and a payload ending in 9 panics the whole call.
// It counts its calls in calls, if set.
type mixBatchCaller struct{ calls *[]int }

func (c mixBatchCaller) CallBatch(ctx context.Context, reqs [][]byte) ([][]byte, error) {
	if c.calls != nil {
		*c.calls = append(*c.calls, len(reqs))
	}
	resps, errs := make([][]byte, len(reqs)), make([]error, len(reqs))
	failed := false
	for i, r := range reqs {
		if string(r) == "all429" {
			return nil, &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true, RetryAfter: 2 * time.Second}
		}
		if r[len(r)-1] == '9' {
			panic("boom batch")
		}
		resps[i], errs[i] = mixCaller{}.Call(ctx, r)
		failed = failed || errs[i] != nil
	}
	if failed {
		return resps, &clientcall.BatchError{Errs: errs}
	}
	return resps, nil
}

// batchFiring is testFiring with calls of up to perCall elements (and
// perBytes bytes) through mixBatchCaller, whose call sizes go to calls.
func batchFiring(f *throttleFn, p adaptive.Policy, o *outs, perCall, perBytes int, calls *[]int) *driver {
	fr := testFiring(f, p, o)
	f.ItemsPerCall, f.BytesPerCall = perCall, perBytes
	f.invoker = newInvoker(reflect.ValueOf(mixBatchCaller{calls: calls}), bytesType, bytesType, true)
	return fr
}

func TestFiringBatches(t *testing.T) {
	send, rej, post := adaptive.Send, adaptive.Reject, adaptive.Postpone
	for _, c := range []struct {
		name              string
		strategy          Strategy
		perCall, perBytes int
		payloads          []string
		script            []adaptive.Verdict
		wantCalls         []int
		want              counts
		recorded          []adaptive.Outcome
	}{
		{"three calls for seven", Route, 3, 0, strings.Fields("a0 b0 c0 d0 e0 f0 g0"), nil,
			[]int{3, 3, 1}, counts{OK: 7}, []adaptive.Outcome{adaptive.Accepted, adaptive.Accepted, adaptive.Accepted}},
		{"partial failure routes only the failed items", Route, 4, 0, strings.Fields("a0 b6 c8 d0"), nil,
			[]int{4}, counts{OK: 2, ST: 1, Errs: 1}, []adaptive.Outcome{adaptive.Throttled}},
		{"partial failure without 429 is accepted", Route, 4, 0, strings.Fields("a0 c8"), nil,
			[]int{2}, counts{OK: 1, Errs: 1}, []adaptive.Outcome{adaptive.Accepted}},
		{"429 on the whole call routes all", Route, 3, 0, strings.Fields("a0 all429 c0 d0"), nil,
			[]int{3, 1}, counts{OK: 1, ST: 3}, []adaptive.Outcome{adaptive.Throttled, adaptive.Accepted}},
		{"429 on the whole call postpones all", Postpone, 3, 0, strings.Fields("a0 all429 c0"), nil,
			[]int{3}, counts{Requeued: 3}, []adaptive.Outcome{adaptive.Throttled}},
		{"a panic fails the whole call", Route, 2, 0, strings.Fields("a0 b9 c0"), nil,
			[]int{2, 1}, counts{OK: 1, Errs: 2}, []adaptive.Outcome{adaptive.Failed, adaptive.Accepted}},
		{"bytes bound the call", Route, 10, 6, strings.Fields("aa0 bb0 cc0 dddddddd0 e0"), nil,
			[]int{2, 1, 1, 1}, counts{OK: 5}, nil},
		{"a rejection rejects the whole call", Route, 2, 0, strings.Fields("a0 b0 c0"), []adaptive.Verdict{rej, send},
			[]int{1}, counts{OK: 1, CT: 2}, []adaptive.Outcome{adaptive.Accepted}},
		{"a postponement keeps the call and the rest", Postpone, 2, 0, strings.Fields("a0 b0 c0 d0 e0"), []adaptive.Verdict{send, post},
			[]int{2}, counts{OK: 2, Rest: 3}, []adaptive.Outcome{adaptive.Accepted}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o outs
			var calls []int
			p := &scriptPolicy{script: c.script, p: 0.5, retryAt: t0.Add(time.Hour)}
			fr := batchFiring(&throttleFn{settings: settings{Strategy: c.strategy}}, p, &o, c.perCall, c.perBytes, &calls)
			fr.run(items(c.payloads...))
			if got := countsOf(fr, &o); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if !slices.Equal(calls, c.wantCalls) {
				t.Errorf("call sizes %v, want %v", calls, c.wantCalls)
			}
			if c.recorded != nil && !slices.Equal(p.recorded, c.recorded) {
				t.Errorf("policy told %v, want %v", p.recorded, c.recorded)
			}
			if fr.t.calls != int64(len(c.wantCalls)) {
				t.Errorf("calls counted %d, want %d", fr.t.calls, len(c.wantCalls))
			}
		})
	}
}

// TestFiringBatchRecords: the records of a partly failed call are those of
// elements called one by one.
func TestFiringBatchRecords(t *testing.T) {
	var o outs
	fr := batchFiring(&throttleFn{settings: settings{Strategy: Route}}, &scriptPolicy{}, &o, 5, 0, nil)
	fr.run(items("x0", "x6", "x8"))
	var o1 outs
	fr1 := testFiring(&throttleFn{settings: settings{Strategy: Route}}, &scriptPolicy{}, &o1)
	fr1.run(items("x0", "x6", "x8"))
	if fmt.Sprint(o.st, o.errs, bytesToStrings(o.ok)) != fmt.Sprint(o1.st, o1.errs, bytesToStrings(o1.ok)) {
		t.Errorf("batched: %+v %+v %q\none by one: %+v %+v %q", o.st, o.errs, o.ok, o1.st, o1.errs, o1.ok)
	}
}

// TestFiringCosts: a call is charged the sum of its elements' costs (at
// least 1 each), or 1 under WithCallCost.
func TestFiringCosts(t *testing.T) {
	for _, c := range []struct {
		name      string
		perCall   int
		perCall1  bool
		costs     []int64
		wantCosts []int
	}{
		{"one by one", 1, false, []int64{0, 5, 100}, []int{1, 5, 100}},
		{"batched", 2, false, []int64{3, 5, 100}, []int{8, 100}},
		{"per call", 2, true, []int64{3, 5, 100}, []int{1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o outs
			p := &scriptPolicy{}
			fr := batchFiring(&throttleFn{settings: settings{Strategy: Route}}, p, &o, c.perCall, 0, nil)
			fr.fn.CostPerCall = c.perCall1
			its := items("a0", "b0", "c0")
			var sum int64
			for i := range its {
				its[i].Cost = c.costs[i]
			}
			fr.run(its)
			if !slices.Equal(p.costs, c.wantCosts) {
				t.Errorf("costs decided %v, want %v", p.costs, c.wantCosts)
			}
			for _, w := range c.wantCosts {
				sum += int64(w)
			}
			if fr.t.cost != sum || len(o.ok) != 3 {
				t.Errorf("cost counted %d, want %d; %d successes, want 3", fr.t.cost, sum, len(o.ok))
			}
		})
	}
}

// orderBatchCaller is orderCaller in batches, for struct elements through
// the reflective path.
type orderBatchCaller struct{}

func (orderBatchCaller) CallBatch(_ context.Context, reqs []order) ([]receipt, error) {
	out := make([]receipt, len(reqs))
	for i, r := range reqs {
		out[i] = receipt{OrderID: r.ID * 2, Tenant: r.Tenant}
	}
	return out, nil
}

// TestInvokerBatchStructs: the reflective path decodes each element,
// fails alone one that does not decode, and encodes the responses.
func TestInvokerBatchStructs(t *testing.T) {
	iv := newInvoker(reflect.ValueOf(orderBatchCaller{}), reflect.TypeOf(order{}), reflect.TypeOf(receipt{}), true)
	its := []item{{Payload: []byte(`{"Tenant":"a","ID":2}`)}, {Payload: []byte(`not json`)}, {Payload: []byte(`{"Tenant":"c","ID":3}`)}}
	r := iv.invoke(context.Background(), its)
	var got []string
	for k := range its {
		resp, err := r.of(k)
		got = append(got, fmt.Sprintf("%s|%v", resp, err != nil))
	}
	want := []string{`{"OrderID":4,"Tenant":"a"}|false`, `|true`, `{"OrderID":6,"Tenant":"c"}|false`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
