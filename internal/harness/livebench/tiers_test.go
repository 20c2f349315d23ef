package livebench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

func TestPercentile(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		var ds []time.Duration
		for _, v := range vs {
			ds = append(ds, time.Duration(v)*time.Millisecond)
		}
		return ds
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one value, median", ms(7), 0.5, 7 * time.Millisecond},
		{"one value, p99", ms(7), 0.99, 7 * time.Millisecond},
		{"odd count, median", ms(1, 2, 3), 0.5, 2 * time.Millisecond},
		{"even count, median is the lower middle", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"two values, p99 is the larger", ms(1, 2), 0.99, 2 * time.Millisecond},
		{"1..100, p99 is the 99th", hundred, 0.99, 99 * time.Millisecond},
		{"1..100, median is the 50th", hundred, 0.5, 50 * time.Millisecond},
		{"1..100, p100 is the largest", hundred, 1, 100 * time.Millisecond},
		{"1..100, a tiny p is the smallest", hundred, 0.001, 1 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v): got %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestTierOfSeq(t *testing.T) {
	var got strings.Builder
	for seq := range 11 {
		got.WriteString(tierOfSeq(seq, 5)[:1])
	}
	if want := "hllllhllllh"; got.String() != want {
		t.Errorf("tiers of 0..10, every fifth high: got %s, want %s", got.String(), want)
	}
	if got := tierOfSeq(0, 0); got != tierLow {
		t.Errorf("tierOfSeq(0, 0): got %s, want %s", got, tierLow)
	}
}

func TestSeqOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload string
		want    int
		ok      bool
	}{
		{"tierPayload", string(tierPayload(42, tierHigh)), 42, true},
		{"the warm-up", string(tierPayload(-1, "normal")), -1, true},
		{"zero", `{"seq":0,"tier":"low"}`, 0, true},
		{"no seq", `{"tier":"low"}`, 0, false},
		{"not JSON", `seq 3`, 0, false},
		{"a batch", `[{"seq":3}]`, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := seqOf([]byte(tc.payload))
			if got != tc.want || ok != tc.ok {
				t.Errorf("seqOf(%s): got %d, %v, want %d, %v", tc.payload, got, ok, tc.want, tc.ok)
			}
		})
	}
	if got, want := string(tierPayload(7, tierLow)), `{"seq":7,"tier":"low"}`; got != want {
		t.Errorf("tierPayload(7, low): got %s, want %s", got, want)
	}
}

func TestInputSeq(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want int
		ok   bool
	}{
		{"a success", `{"input":"{\"seq\":12,\"tier\":\"high\"}","response":{"seq":12,"tier":"high"}}`, 12, true},
		{"a failure record", `{"input":"{\"seq\":3,\"tier\":\"low\"}","error":"max wait","attempts":0}`, 3, true},
		{"base64 input", `{"input":"eyJzZXEiOjN9","input_encoding":"base64"}`, 0, false},
		{"no input", `{"response":{}}`, 0, false},
		{"not JSON", `oops`, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := inputSeq([]byte(tc.line))
			if got != tc.want || ok != tc.ok {
				t.Errorf("inputSeq(%s): got %d, %v, want %d, %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestTierRunMeasure(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	set := func(seqs ...int) map[int]bool {
		m := map[int]bool{}
		for _, s := range seqs {
			m[s] = true
		}
		return m
	}
	// Ten elements, published 100 ms apart, every fifth high.
	var sent []sentElement
	for seq := range 10 {
		sent = append(sent, sentElement{tier: tierOfSeq(seq, 5), at: at(100 * seq)})
	}
	for _, tc := range []struct {
		name     string
		accepted map[int]time.Time
		outputs  map[string]map[int]bool
		want     []TierResult
	}{
		{
			name: "highs first, lows expire or wait",
			// High 0 waits 200 ms, high 5 400 ms; lows 1, 2 and 3 wait
			// 5 s, 4 s and 3 s; 4 and 6..8 expire; 9 is server-throttled.
			accepted: map[int]time.Time{0: at(200), 5: at(900), 1: at(5100), 2: at(4200), 3: at(3300)},
			outputs: map[string]map[int]bool{
				pipeline.OutSuccess:         set(0, 5, 1, 2, 3),
				pipeline.OutClientThrottled: set(4, 6, 7, 8),
				pipeline.OutServerThrottled: set(9),
			},
			want: []TierResult{
				{Tier: tierHigh, Sent: 2, Succeeded: 2, Waits: 2, MedianWait: 0.2, P99Wait: 0.4},
				{Tier: tierLow, Sent: 8, Succeeded: 3, Expired: 4, Other: 1, Waits: 3, MedianWait: 4, P99Wait: 5},
			},
		},
		{
			name:     "a success without an accepted call is counted, its wait is not",
			accepted: map[int]time.Time{0: at(300)},
			outputs:  map[string]map[int]bool{pipeline.OutSuccess: set(0, 5)},
			want: []TierResult{
				{Tier: tierHigh, Sent: 2, Succeeded: 2, Waits: 1, MedianWait: 0.3, P99Wait: 0.3},
				{Tier: tierLow, Sent: 8},
			},
		},
		{
			name:     "outputs of elements never published (the warm-up) are left out",
			accepted: map[int]time.Time{-1: at(0), 0: at(100)},
			outputs: map[string]map[int]bool{
				pipeline.OutSuccess: set(-1, 0), pipeline.OutErrors: set(10),
			},
			want: []TierResult{
				{Tier: tierHigh, Sent: 2, Succeeded: 1, Waits: 1, MedianWait: 0.1, P99Wait: 0.1},
				{Tier: tierLow, Sent: 8},
			},
		},
		{
			name: "errors count as other",
			outputs: map[string]map[int]bool{
				pipeline.OutErrors: set(1, 5),
			},
			want: []TierResult{
				{Tier: tierHigh, Sent: 2, Other: 1},
				{Tier: tierLow, Sent: 8, Other: 1},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tierRun{sent: sent, accepted: tc.accepted, outputs: tc.outputs}
			got := tr.measure(pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled, pipeline.OutErrors)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
				t.Errorf("measure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTierRunMeasureOtherTiers(t *testing.T) {
	sent := []sentElement{{tier: "normal"}, {tier: tierLow}, {tier: "normal"}}
	got := tierRun{sent: sent}.measure(pipeline.OutSuccess, pipeline.OutClientThrottled)
	want := []TierResult{{Tier: tierHigh}, {Tier: tierLow, Sent: 1}, {Tier: "normal", Sent: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("measure (-want +got):\n%s", diff)
	}
}

func TestPriorityValues(t *testing.T) {
	r := Result{Tiers: []TierResult{
		{Tier: tierHigh, Sent: 600, Succeeded: 597, Waits: 597, MedianWait: 1, P99Wait: 2.5},
		{Tier: tierLow, Sent: 2400, Succeeded: 1000, Waits: 1000, MedianWait: 5, P99Wait: 6},
	}}
	for _, tc := range []struct {
		name string
		r    Result
		m    metric
		want float64
	}{
		{"high successes", r, highSucceeded, 0.995},
		{"high p99 ÷ low median", r, highP99Ratio, 0.5},
		{"no tiers: not measured", Result{}, highSucceeded, math.NaN()},
		{"no low waits: not measured", Result{Tiers: r.Tiers[:1]}, highP99Ratio, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.r.value(tc.m)
			if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.want) > 1e-9) {
				t.Errorf("value: got %v, want %v", got, tc.want)
			}
		})
	}
}
