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
	t.Logf("%d calls (%d high), counters %v", len(calls), sentHigh, got)
}
