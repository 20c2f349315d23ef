package sim

import (
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/defaults"
)

// tellingLess is a fixed window that tells a quota other than the one it
// enforces, as the quota server does with Config.AdvertiseQuota: what
// remains of the told quota is what the enforced one has left beyond the
// difference.
type tellingLess struct {
	*fixedWindow
	told int64
}

func (w tellingLess) state(at time.Duration) quotaState {
	s := w.fixedWindow.state(at)
	used := s.capacity - s.remaining
	return quotaState{limit: w.told, capacity: w.told, remaining: max(w.told-used, 0), reset: s.reset, period: s.period}
}

// TestAdvertisedLessThanAllowed: a window of a second that allows 100 and
// tells 10 in IETF's headers (Remaining 0 from the tenth request of each
// second on, every request accepted) does not hold one worker below the
// rate it tells, less the reserve and the start: a quarter of Remaining
// over the time to Reset would. (Both the proof that the worker is alone
// and the test of the window take it to the told rate here.)
func TestAdvertisedLessThanAllowed(t *testing.T) {
	model := BackendModel{Name: "fixed-1s-telling-10", New: func(c Capacity, seed uint64) Backend {
		return tellingLess{&fixedWindow{cap: c, window: time.Second, ra: true}, 10}
	}}
	const n = 1200
	cfg := Config{Backend: model, Capacity: 100, Latency: time.Millisecond, RefuseAtOnce: true,
		StartJitter: DefaultConfig(1).StartJitter, SizeCalls: true, CallTimeout: defaults.CallTimeout,
		Advertise: true, Headers: HeadersIETF, Workers: 1, Groups: 1, BatchSize: defaults.BatchSize}
	r, err := Run(bounded("telling-less", n, 10*time.Minute), CrossedSuite().Algorithms[0], cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metrics
	if m.Accepted != n {
		t.Fatalf("got %d of %d accepted", m.Accepted, n)
	}
	if rate := float64(m.Accepted) / m.LastAccepted.Seconds(); rate < 9 {
		t.Errorf("got %.1f requests a second, want at least 90 %% of the 10 told", rate)
	}
}
