package throttle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

func init() {
	register.DoFn2x0[[]byte, func([]byte)](&genJSON{})
	beam.RegisterType(reflect.TypeOf((*tokenCost)(nil)).Elem())
}

// genJSON emits N JSON payloads {"id":i,"tokens":t} whose tokens vary from
// 1 to 100 (tokensOf).
type genJSON struct{ N int }

func (g *genJSON) ProcessElement(_ []byte, emit func([]byte)) {
	for i := range g.N {
		emit(fmt.Appendf(nil, `{"id":%d,"tokens":%d}`, i, tokensOf(i)))
	}
}

// tokensOf is the cost of the i-th element of genJSON: 1 to 100, spread.
func tokensOf(i int) int { return i*37%100 + 1 }

func generateJSON(s beam.Scope, n int) beam.PCollection {
	return beam.Reshuffle(s, beam.ParDo(s, &genJSON{N: n}, beam.Impulse(s)))
}

// tokenCost charges an element its "tokens" field, as an LLM API counts.
type tokenCost struct{}

func (tokenCost) Cost(b []byte) (int, error) {
	var v struct{ Tokens int }
	err := json.Unmarshal(b, &v)
	return v.Tokens, err
}

// TestBatchMakesFewerCalls: the same 1,000 elements in calls of 50 make
// 50 times fewer calls to the quota server (JSON-array batches) than one
// element a call, and every element still succeeds with its own response.
func TestBatchMakesFewerCalls(t *testing.T) {
	const n = 1000
	for _, perCall := range []int{1, 50} {
		t.Run(fmt.Sprint(perCall), func(t *testing.T) {
			srv, err := testserver.NewServer(testserver.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, s := beam.NewPipelineWithRoot()
			out := Adaptive(s, generateJSON(s, n), &clientcall.HTTP{URL: srv.Endpoint()},
				WithMode(ModeSRE), WithBatchSize(n), WithItemsPerCall(perCall))
			passert.Count(s, out.Success, "success", n)
			passert.Equals(s, beam.ParDo(s, bytesToString, out.Success), jsonInputs(n)...)
			res := runPipeline(t, p, true)
			st := srv.Handler.Stats()
			if want := int64(n / perCall); st.Accepted != want || counter(t, res, metricCalls) != want {
				t.Errorf("server answered %d calls, the transform counted %d; want %d", st.Accepted, counter(t, res, metricCalls), want)
			}
			if st.Items != n {
				t.Errorf("server saw %d items, want %d", st.Items, n)
			}
		})
	}
}

func jsonInputs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"id":%d,"tokens":%d}`, i, tokensOf(i))
	}
	return out
}

// TestBatchPartialFailures: items the server fails one by one inside a
// batch go to Errors and only they; calls over quota are answered 429 as a
// whole and their items routed (Route) or postponed (the default); every
// element ends in exactly one output, as the server's own counts say.
func TestBatchPartialFailures(t *testing.T) {
	const n, perCall = 1000, 50
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"route", []Option{WithMode(ModeSRE), WithStrategy(Route)}},
		{"postpone", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := testserver.NewServer(testserver.Config{Quota: 5, Period: time.Second, ItemErrorRate: 0.2, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, s := beam.NewPipelineWithRoot()
			opts := append([]Option{WithGroups(2), WithItemsPerCall(perCall), WithBatchSize(200)}, tc.opts...)
			out := Adaptive(s, generateJSON(s, n), &clientcall.HTTP{URL: srv.Endpoint(), ItemStatusField: "status"}, opts...)
			if tc.name == "postpone" {
				passert.Empty(s, out.ClientThrottled) // nothing is rejected locally
			}
			res := runPipeline(t, p, true)
			st := srv.Handler.Stats()
			got := outcomeMetrics(t, res)
			if sumOutcomes(got) != n {
				t.Errorf("outputs add up to %d, want %d (%v)", sumOutcomes(got), n, got)
			}
			if got[metricAccepted] != st.Items-st.ItemErrors || got[metricErrors] != st.ItemErrors {
				t.Errorf("success %d and errors %d, want the server's %d items less %d failed, and those %d",
					got[metricAccepted], got[metricErrors], st.Items, st.ItemErrors, st.ItemErrors)
			}
			if st.ItemErrors == 0 || st.Items == st.ItemErrors {
				t.Errorf("server failed %d of %d items, want some", st.ItemErrors, st.Items)
			}
			if tc.name == "postpone" && (st.Items != n || got[metricServerThrottled] != 0) {
				t.Errorf("postponing: server took %d items, %d server-throttled; want every item once and none", st.Items, got[metricServerThrottled])
			}
			t.Logf("outputs %v; server: %d calls accepted, %d rejected, %d items, %d item errors",
				got, st.Accepted, st.Rejected, st.Items, st.ItemErrors)
		})
	}
}

// TestTokensPerMinuteQuota: an LLM-style quota of 60,000 tokens a minute
// (1,000 a second: the quota server counts each request's "tokens" field),
// shared through Redis in tokens, and elements whose costs vary from 1 to
// 100 tokens. Every element succeeds, and the tokens sent (accepted or
// refused) stay within 5 % of what the quota allows over the seconds the
// server was busy. Counting requests instead of tokens would send about
// 50 times too much.
func TestTokensPerMinuteQuota(t *testing.T) {
	const n, perSecond, maxCost = 240, 1000, 100
	rd := services.StartRedis(t)
	srv, err := testserver.NewServer(testserver.Config{Quota: perSecond, Period: time.Second, CostField: "tokens"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var tokens int64
	for i := range n {
		tokens += int64(tokensOf(i))
	}
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generateJSON(s, n), &clientcall.HTTP{URL: srv.Endpoint()}, WithGroups(4), WithCost(tokenCost{}),
		WithQuota(QuotaConfig{Backend: quotaRedis, Addr: rd.Addr, Key: "tpm-" + uuid.NewString(),
			Rate: fmt.Sprintf("%d/m", perSecond*60), Burst: maxCost}))
	passert.Count(s, out.Success, "success", n)
	passert.Empty(s, out.ClientThrottled)
	passert.Empty(s, out.ServerThrottled)
	passert.Empty(s, out.Errors)
	res := runPipeline(t, p, true)
	st := srv.Handler.Stats()
	if st.AcceptedCost != tokens || counter(t, res, metricCost) != tokens+st.RejectedCost {
		t.Errorf("server accepted %d tokens, transform sent %d; want %d, and %d plus the %d refused",
			st.AcceptedCost, counter(t, res, metricCost), tokens, tokens, st.RejectedCost)
	}
	busy := st.Series[len(st.Series)-1].T - st.Series[0].T + 1
	sent := st.AcceptedCost + st.RejectedCost
	if limit := float64(perSecond*busy+maxCost) * 1.05; float64(sent) > limit {
		t.Errorf("sent %d tokens over %d busy seconds, want at most %.0f (the quota + 5 %%)", sent, busy, limit)
	}
	if st.RejectedCost*20 > st.AcceptedCost {
		t.Errorf("refused %d tokens of %d accepted, want under 5 %%", st.RejectedCost, st.AcceptedCost)
	}
	t.Logf("%d tokens in %d elements over %d busy seconds (quota %d/s); %d refused", tokens, n, busy, perSecond, st.RejectedCost)
}

func init() {
	beam.RegisterType(reflect.TypeOf((*pickyCost)(nil)).Elem())
	register.Function1x1[Record, bool](costErrorOK)
}

// wordCount charges a string element its words.
type wordCount struct{}

func (wordCount) Cost(s string) (int, error) { return len(strings.Fields(s)), nil }

// pickyCost fails to cost one element in four by each of its three ways:
// an error, a negative cost and a panic.
type pickyCost struct{}

func (pickyCost) Cost(b []byte) (int, error) {
	var v struct{ ID int }
	json.Unmarshal(b, &v)
	switch v.ID % 4 {
	case 1:
		return 0, fmt.Errorf("no tokens in element %d", v.ID)
	case 2:
		return -1, nil
	case 3:
		panic("cost boom")
	}
	return 7, nil
}

func costErrorOK(r Record) bool {
	var v struct{ ID int }
	json.Unmarshal(r.Input, &v)
	want := map[int]string{
		1: fmt.Sprintf("throttle: cost: no tokens in element %d", v.ID),
		2: "throttle: cost function returned -1, want a cost >= 0",
		3: "throttle: cost function panicked: cost boom",
	}[v.ID%4]
	return r.Outcome == OutcomeError && r.Error == want
}

// TestCostFailures: an element whose cost cannot be had goes to Errors with
// its payload and the reason, without a call; the others are charged.
func TestCostFailures(t *testing.T) {
	const n = 100
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generateJSON(s, n), clientcall.Echo{}, WithMode(ModeSRE), WithCost(pickyCost{}))
	passert.Count(s, out.Success, "success", n/4)
	passert.Count(s, out.Errors, "errors", 3*n/4)
	passert.True(s, out.Errors, costErrorOK)
	res := runPipeline(t, p, true)
	if got := counter(t, res, metricCost); got != 7*n/4 {
		t.Errorf("%s = %d, want %d", metricCost, got, 7*n/4)
	}
}

// TestBatchOptionsRefused: batching needs a caller with a batch form of
// the element's type, and a cost function the element's type.
func TestBatchOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caller any
		opts   []Option
		want   string
	}{
		{"no CallBatch", mixCaller{}, []Option{WithItemsPerCall(5)}, "has no method CallBatch"},
		{"bytes need CallBatch", mixCaller{}, []Option{WithBytesPerCall(100)}, "has no method CallBatch"},
		{"CallBatch of another type", orderBatchCaller{}, []Option{WithItemsPerCall(5)}, "takes throttle.order but the input elements are []uint8"},
		{"cost of another type", mixCaller{}, []Option{WithCost(wordCount{})}, "WithCost: throttle.wordCount takes string, but the input PCollection holds []uint8"},
		{"nil cost", mixCaller{}, []Option{WithCost[[]byte](nil)}, "WithCost: nil"},
		{"items out of range", mixBatchCaller{}, []Option{WithItemsPerCall(0)}, "WithItemsPerCall: must be in [1, 100000], got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := TryAdaptive(s, generateJSON(s, 1), tc.caller, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
