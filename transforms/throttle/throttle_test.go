package throttle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/prismsplit"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

func TestMain(m *testing.M) {
	ptest.Main(m)
}

func init() {
	beam.RegisterType(reflect.TypeOf((*mixCaller)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*order)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*receipt)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*orderCaller)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*tenantKey)(nil)).Elem())
	register.DoFn2x0[[]byte, func([]byte)](&genBytes{})
	register.Function1x1[Record, string](recordInput)
	register.Function1x1[Record, int](recordAttempts)
	register.Function1x1[Record, string](recordGroup)
	register.Function1x1[[]byte, string](bytesToString)
	register.Function1x1[Record, bool](mixErrorRecordOK)
	register.Function1x1[Record, bool](mixThrottledRecordOK)
	register.Function1x1[receipt, bool](receiptOK)
	register.Function1x1[Record, bool](orderErrorOK)
}

// runPipeline runs p on Prism, without dynamic splits (prismsplit.Avoid).
// With synthetic set, Prism's processing-time clock jumps to the next timer
// (experiment prism_disable_rtc), so batch intervals cost no wall time.
func runPipeline(t *testing.T, p *beam.Pipeline, synthetic bool) beam.PipelineResult {
	t.Helper()
	old := *jobopts.Experiments
	defer func() { *jobopts.Experiments = old }()
	prismsplit.Avoid()
	if synthetic {
		*jobopts.Experiments = prismsplit.WithExperiment(*jobopts.Experiments, "prism_disable_rtc")
	}
	res, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}
	return res
}

// genBytes emits N payloads "e0000000".."e{N-1}".
type genBytes struct{ N int }

func (g *genBytes) ProcessElement(_ []byte, emit func([]byte)) {
	for i := range g.N {
		emit([]byte(fmt.Sprintf("e%07d", i)))
	}
}

func generate(s beam.Scope, n int) beam.PCollection {
	return beam.Reshuffle(s, beam.ParDo(s, &genBytes{N: n}, beam.Impulse(s)))
}

// mixCaller answers by the last digit of the payload: 0-5 success (echo),
// 6-7 HTTP 429, 8 HTTP 400, 9 panic.
type mixCaller struct{}

func (mixCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	switch d := req[len(req)-1]; {
	case d <= '5':
		return req, nil
	case d <= '7':
		return nil, &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true, RetryAfter: time.Second}
	case d == '8':
		return nil, &clientcall.StatusError{StatusCode: http.StatusBadRequest}
	default:
		panic("boom " + string(req))
	}
}

func mixErrorRecordOK(r Record) bool {
	switch string(r.Input) {
	case "x9":
		return strings.Contains(r.Error, "caller panicked: boom x9") && r.Outcome == OutcomeError && r.Attempts == 1
	case "x8":
		return r.StatusCode == 400 && r.Outcome == OutcomeError
	}
	return false
}

func mixThrottledRecordOK(r Record) bool {
	return string(r.Input) == "x6" && r.StatusCode == 429 && r.RetryAfter == 1000 && r.Outcome == OutcomeServerThrottled &&
		r.Error == "Server returned HTTP response code: 429" && r.FirstAttempt > 0 && r.LastAttempt >= r.FirstAttempt
}

func wantOutcome(payload string) Outcome {
	switch d := payload[len(payload)-1]; {
	case d <= '5':
		return OutcomeSuccess
	case d <= '7':
		return OutcomeServerThrottled
	}
	return OutcomeError
}

func recordInput(r Record) string   { return string(r.Input) }
func recordAttempts(r Record) int   { return r.Attempts }
func recordGroup(r Record) string   { return r.Group }
func bytesToString(b []byte) string { return string(b) }

func counter(t *testing.T, res beam.PipelineResult, name string) int64 {
	t.Helper()
	var total int64
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == namespace && c.Key.Name == name {
			total += c.Result()
		}
	}
	return total
}

// TestConservation: 10,000 elements with a known mix of outcomes; with a huge
// K the client never throttles, so every element must land exactly where the
// caller's outcome says, and the four outputs add up to the input.
func TestConservation(t *testing.T) {
	const n = 10000
	p, s := beam.NewPipelineWithRoot()
	in := generate(s, n)
	out := Adaptive(s, in, mixCaller{}, WithGroups(4), WithBatchSize(500), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}), WithSeed(1))

	var wantOK, wantST, wantErr []string
	for i := range n {
		e := fmt.Sprintf("e%07d", i)
		switch wantOutcome(e) {
		case OutcomeSuccess:
			wantOK = append(wantOK, e)
		case OutcomeServerThrottled:
			wantST = append(wantST, e)
		default:
			wantErr = append(wantErr, e)
		}
	}
	passert.Equals(s, beam.ParDo(s, bytesToString, out.Success), toAny(wantOK)...)
	passert.Equals(s, beam.ParDo(s, recordInput, out.ServerThrottled), toAny(wantST)...)
	passert.Equals(s, beam.ParDo(s, recordInput, out.Errors), toAny(wantErr)...)
	passert.Empty(s, out.ClientThrottled)

	res := runPipeline(t, p, true)
	got := map[string]int64{}
	for _, m := range []string{metricAccepted, metricClientThrottled, metricServerThrottled, metricErrors, metricDropped} {
		got[m] = counter(t, res, m)
	}
	if sum := got[metricAccepted] + got[metricClientThrottled] + got[metricServerThrottled] + got[metricErrors] + got[metricDropped]; sum != n {
		t.Errorf("metrics add up to %d, want %d (%v)", sum, n, got)
	}
	for m, want := range map[string]int{metricAccepted: len(wantOK), metricServerThrottled: len(wantST), metricErrors: len(wantErr), metricClientThrottled: 0} {
		if got[m] != int64(want) {
			t.Errorf("metric %s = %d, want %d", m, got[m], want)
		}
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestPanicMessage checks that a panicking caller's element reaches Errors
// with the panic message and its original payload.
func TestPanicAndStatusInRecords(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.Create(s, []byte("x9"), []byte("x8"), []byte("x6"))
	out := Adaptive(s, in, mixCaller{}, WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.True(s, out.Errors, mixErrorRecordOK)
	passert.True(s, out.ServerThrottled, mixThrottledRecordOK)
	passert.Count(s, out.Errors, "errors", 2)
	passert.Count(s, out.ServerThrottled, "server throttled", 1)
	runPipeline(t, p, true)
}

// order is a user struct element; receipt the response of orderCaller.
type order struct {
	Tenant string
	ID     int
}

type receipt struct {
	OrderID int
	Tenant  string
}

// orderCaller accepts every order.
type orderCaller struct{ Prefix string }

func (c orderCaller) Call(_ context.Context, o order) (receipt, error) {
	if o.ID < 0 {
		return receipt{}, errors.New("negative id")
	}
	return receipt{OrderID: o.ID, Tenant: c.Prefix + o.Tenant}, nil
}

func receiptOK(r receipt) bool { return strings.HasPrefix(r.Tenant, "p-t") && r.OrderID >= 0 }

func orderErrorOK(r Record) bool {
	var o order
	return r.DecodeInput(&o) == nil && o.ID == -1 && o.Tenant == "t0" && r.Group == "t0" && r.Error == "negative id"
}

// tenantKey keys orders by tenant.
type tenantKey struct{}

func (tenantKey) Key(o order) string { return o.Tenant }

func TestStructElementsAndKeyFunc(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	var orders []any
	for i := range 30 {
		orders = append(orders, order{Tenant: "t" + strconv.Itoa(i%3), ID: i - 1})
	}
	in := beam.Create(s, orders...)
	out := Adaptive(s, in, orderCaller{Prefix: "p-"}, WithKeyFunc(tenantKey{}), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Count(s, out.Success, "success", 29)
	passert.True(s, out.Success, receiptOK)
	passert.True(s, out.Errors, orderErrorOK)
	passert.Count(s, out.Errors, "errors", 1)
	runPipeline(t, p, true)
}

func TestStringElements(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.Create(s, "a", "b", "c")
	out := Adaptive(s, in, stringCaller{})
	passert.Equals(s, out.Success, "A", "B", "C")
	runPipeline(t, p, true)
}

type stringCaller struct{}

func (stringCaller) Call(_ context.Context, s string) (string, error) { return strings.ToUpper(s), nil }

func init() {
	beam.RegisterType(reflect.TypeOf((*stringCaller)(nil)).Elem())
}

func TestTryAdaptiveErrors(t *testing.T) {
	tests := []struct {
		name   string
		caller any
		opts   []Option
		want   string
	}{
		{"nil caller", nil, nil, "caller is nil"},
		{"no Call", struct{}{}, nil, "has no method Call"},
		{"wrong element type", stringCaller{}, nil, "takes string but the input elements are []uint8"},
		{"zero batch", mixCaller{}, []Option{WithBatchSize(0)}, "WithBatchSize: must be >= 1"},
		{"negative K", mixCaller{}, []Option{WithSRE(adaptive.SREConfig{K: -1})}, "K"},
		{"bad strategy", mixCaller{}, []Option{WithStrategy("sometimes")}, "unknown strategy"},
		{"key func of another type", mixCaller{}, []Option{WithKeyFunc(tenantKey{})}, "WithKeyFunc: throttle.tenantKey takes throttle.order, but the input PCollection holds []uint8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			in := beam.Create(s, []byte("x"))
			_, err := TryAdaptive(s, in, tc.caller, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "throttle.Adaptive: ") {
				t.Errorf("got error %v, want one beginning \"throttle.Adaptive: \" and containing %q", err, tc.want)
			}
		})
	}
}

func init() {
	register.Function1x1[Reply, bool](messageReplyOK)
	register.Function1x1[Record, bool](messageRecordOK)
}

// messageReplyOK: a Reply holds the input Message unchanged and the
// response (mixCaller echoes).
func messageReplyOK(r Reply) bool {
	in := r.Input
	return string(r.Response) == string(in.Data) && in.MessageID == "id-"+string(in.Data) &&
		in.AckID == "ack-"+string(in.Data) && in.Attributes["k"] == "v" && in.Attempts == 2
}

// messageRecordOK: a Record of a Message input carries its Data as Input,
// its metadata, and its earlier attempts added to its own.
func messageRecordOK(r Record) bool {
	var m Message
	return r.DecodeInput(&m) == nil && string(m.Data) == "x8" && m.MessageID == "id-x8" && m.AckID == "ack-x8" &&
		m.Attributes["k"] == "v" && r.Attempts == 3
}

// TestMessageElements: the caller gets each Message's Data, and its
// metadata passes through to the Reply or the Record.
func TestMessageElements(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	var msgs []any
	for _, d := range []string{"x0", "x1", "x8"} {
		msgs = append(msgs, Message{Data: []byte(d), MessageID: "id-" + d, AckID: "ack-" + d, Attributes: map[string]string{"k": "v"}, Attempts: 2})
	}
	out := Adaptive(s, beam.Create(s, msgs...), mixCaller{}, WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Count(s, out.Success, "success", 2)
	passert.True(s, out.Success, messageReplyOK)
	passert.Count(s, out.Errors, "errors", 1)
	passert.True(s, out.Errors, messageRecordOK)
	runPipeline(t, p, true)
	s2 := beam.NewPipeline().Root()
	if _, err := TryAdaptive(s2, beam.Create(s2, msgs...), stringCaller{}); err == nil {
		t.Error("TryAdaptive over Messages with a string caller: got nil error")
	}
}

// TestWithClassifier: an API that answers 403 when over quota. By default a
// 403 is an error; with a classifier that counts it as throttling, the same
// elements are server-throttled (routed, under Route) instead.
func TestWithClassifier(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "quota exceeded", http.StatusForbidden)
	}))
	defer api.Close()
	const n = 20
	tests := []struct {
		name string
		opts []Option
		errs int // the rest are throttled, by the server or (SRE) the client
	}{
		{"default", nil, n},
		{"403 throttles", []Option{WithClassifier(clientcall.StatusClassifier{HTTPStatuses: []int{403}})}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			opts := append([]Option{WithStrategy(Route), WithMode(ModeSRE)}, tc.opts...)
			out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: api.URL}, opts...)
			passert.Empty(s, out.Success)
			passert.Count(s, out.Errors, "errors", tc.errs)
			passert.Count(s, beam.Flatten(s, out.ServerThrottled, out.ClientThrottled), "throttled", n-tc.errs)
			runPipeline(t, p, true)
		})
	}
}
