package throttle

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*recordingCaller)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*prefixPriority)(nil)).Elem())
	register.Function1x1(isHigh)
}

// sendLogs holds, by test name, the payloads recordingCaller was called
// with, in the order of the calls.
var sendLogs sync.Map // string → *sendLog

type sendLog struct {
	mu    sync.Mutex
	calls []string
}

// recordingCaller answers every call with its payload and logs the payload
// under Log.
type recordingCaller struct{ Log string }

func (c recordingCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	if l, ok := sendLogs.Load(c.Log); ok {
		l := l.(*sendLog)
		l.mu.Lock()
		l.calls = append(l.calls, string(req))
		l.mu.Unlock()
	}
	return req, nil
}

// prefixPriority puts payloads beginning "high" in the high tier, the rest
// in the low one.
type prefixPriority struct{}

func (prefixPriority) Priority(b []byte) int {
	if strings.HasPrefix(string(b), "high") {
		return 1
	}
	return -1
}

func isHigh(r Record) bool { return strings.HasPrefix(string(r.Input), "high") }

// TestPriorityHighFirst: one group holds 240 elements, a fifth of them high
// priority, spread through the input, against a known rate of 20 calls a
// second and a max wait of 6 s (Prism's synthetic clock): twice what the
// rate lets through before the max wait. Every high element is called for
// before any low one, so none expires; low ones do; every element ends in
// exactly one output.
func TestPriorityHighFirst(t *testing.T) {
	const n = 240
	log := &sendLog{}
	sendLogs.Store(t.Name(), log)
	defer sendLogs.Delete(t.Name())
	var in []any
	highs := 0
	for i := range n {
		tier := "low"
		if i%5 == 2 {
			tier = "high"
			highs++
		}
		in = append(in, fmt.Appendf(nil, "%s-%03d", tier, i))
	}
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, beam.Create(s, in...), recordingCaller{Log: t.Name()},
		WithPriority(prefixPriority{}), WithGroups(1), WithBatchSize(10), WithBatchInterval(100*time.Millisecond),
		WithCallsInFlight(1), WithMaxWait(6*time.Second),
		WithQuota(QuotaConfig{Backend: quotaLocal, Rate: "20/s"}))
	passert.Empty(s, filter.Include(s, out.ClientThrottled, isHigh))
	res := runPipeline(t, p, true)
	got := outcomeMetrics(t, res)
	if sumOutcomes(got) != n {
		t.Errorf("outputs add up to %d, want %d (%v)", sumOutcomes(got), n, got)
	}
	log.mu.Lock()
	calls := append([]string(nil), log.calls...)
	log.mu.Unlock()
	sentHigh, firstLow := 0, -1
	for i, c := range calls {
		switch {
		case strings.HasPrefix(c, "high"):
			sentHigh++
			if firstLow >= 0 {
				t.Errorf("call %d is %s, after the low-priority %s at call %d", i, c, calls[firstLow], firstLow)
			}
		case firstLow < 0:
			firstLow = i
		}
	}
	if sentHigh != highs {
		t.Errorf("%d of the %d high-priority elements were called for, want all", sentHigh, highs)
	}
	if got[metricClientThrottled] == 0 || got[metricAccepted] != int64(len(calls)) {
		t.Errorf("counters %v and %d calls: want some low-priority elements expired, and a success per call", got, len(calls))
	}
	// The metrics per tier: every element of a tier ends in its accepted
	// or its dead_lettered counter, and its wait is recorded once.
	for _, tc := range []struct {
		accepted, deadLettered, waitMs string
		n                              int64
	}{
		{metricHighAccepted, metricHighDeadLettered, metricHighWaitMs, int64(highs)},
		{metricLowAccepted, metricLowDeadLettered, metricLowWaitMs, int64(n - highs)},
	} {
		acc, dl := counter(t, res, tc.accepted), counter(t, res, tc.deadLettered)
		if acc+dl != tc.n {
			t.Errorf("%s %d + %s %d = %d, want %d", tc.accepted, acc, tc.deadLettered, dl, acc+dl, tc.n)
		}
		if count, _ := distribution(res, tc.waitMs); count != tc.n {
			t.Errorf("%s counts %d waits, want %d", tc.waitMs, count, tc.n)
		}
	}
	if dl := counter(t, res, metricHighDeadLettered); dl != 0 {
		t.Errorf("%s = %d, want 0", metricHighDeadLettered, dl)
	}
	if dl, ct := counter(t, res, metricLowDeadLettered), got[metricClientThrottled]; dl != ct {
		t.Errorf("%s = %d, want the %d client-throttled elements", metricLowDeadLettered, dl, ct)
	}
	if _, highMax := distribution(res, metricHighWaitMs); highMax > 6000 {
		t.Errorf("a high-priority element waited %d ms, longer than the max wait", highMax)
	}
	if counter(t, res, metricLowPostponed) == 0 {
		t.Errorf("%s = 0, want the low-priority elements left for later firings counted", metricLowPostponed)
	}
	t.Logf("%d calls (%d high), counters %v", len(calls), sentHigh, got)
}

// distribution returns the count and the largest value of the
// transform's distribution name.
func distribution(res beam.PipelineResult, name string) (count, maxv int64) {
	for _, d := range res.Metrics().AllMetrics().Distributions() {
		if d.Key.Namespace == namespace && d.Key.Name == name {
			count += d.Result().Count
			maxv = max(maxv, d.Result().Max)
		}
	}
	return count, maxv
}

// TestPriorityShedsLowFirst: a group's buffer holds 10 elements; 30
// low-priority elements arrive, then 10 high-priority ones (a test
// stream's two steps). The high ones take the places of queued low ones,
// which are shed, so no high-priority element is shed while a low one is
// kept; every element ends in exactly one output.
func TestPriorityShedsLowFirst(t *testing.T) {
	var lows, highs []any
	for i := range 30 {
		lows = append(lows, fmt.Appendf(nil, "low-%03d", i))
	}
	for i := range 10 {
		highs = append(highs, fmt.Appendf(nil, "high-%03d", i))
	}
	con := teststream.NewConfig()
	if err := con.AddElements(1000, lows...); err != nil {
		t.Fatal(err)
	}
	if err := con.AdvanceWatermark(1500); err != nil {
		t.Fatal(err)
	}
	if err := con.AddElements(2000, highs...); err != nil {
		t.Fatal(err)
	}
	if err := con.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, teststream.Create(s, con), recordingCaller{},
		WithPriority(prefixPriority{}), WithGroups(1), WithMaxBuffered(10), WithBatchInterval(time.Second))
	passert.Empty(s, filter.Include(s, out.ClientThrottled, isHigh))
	passert.Count(s, out.ClientThrottled, "client-throttled", 30)
	res := runPipeline(t, p, true)
	got := outcomeMetrics(t, res)
	if sumOutcomes(got) != 40 {
		t.Errorf("outputs add up to %d, want 40 (%v)", sumOutcomes(got), got)
	}
	if n := counter(t, res, metricHighAccepted); n != 10 {
		t.Errorf("%s = %d, want 10", metricHighAccepted, n)
	}
}
