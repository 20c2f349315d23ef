package testserver

import (
	"testing"
	"time"
)

func TestDelayHistogram(t *testing.T) {
	var h delayHistogram
	if got := h.quantile(0.99); got != 0 {
		t.Errorf("empty: p99 %v, want 0", got)
	}
	h.add(0)                    // under a millisecond: counted as 0
	for i := 1; i <= 999; i++ { // 10 ms … 9.99 s
		h.add(time.Duration(i) * 10 * time.Millisecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0, 0},
		{0.001, 0},
		{0.002, 10 * time.Millisecond},
		{0.5, 4990 * time.Millisecond},
		{0.99, 9890 * time.Millisecond},
		{1, 9990 * time.Millisecond},
	} {
		got := h.quantile(tc.q)
		if got < tc.want || float64(got) > float64(tc.want)*delayRatio {
			t.Errorf("quantile(%v) = %v, want %v to a hundredth above", tc.q, got, tc.want)
		}
	}
}
