package sim_test

import (
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/internal/harness/sim"
	"github.com/beamthrottle/beamthrottle/internal/permits"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// TestSharedQuota: four groups on two workers, each worker with its own
// permits (the transform's machine, internal/permits) of one modelled
// quota service, offered twice what the backend takes: the calls sent
// never exceed what the service granted, which never exceeds the quota,
// both workers make round trips, and two runs count the same.
func TestSharedQuota(t *testing.T) {
	const seconds = 20
	sc := sim.Scenario{Name: "quota", Duration: seconds * time.Second, Phases: []sim.Phase{{Offered: 2, Capacity: 1}}}
	var alg sim.Algorithm
	for _, a := range sim.Algorithms() {
		if a.Name == sim.Pacer {
			alg = a
		}
	}
	for _, c := range []struct {
		name  string
		model sim.QuotaModel
		most  int64 // the quota over the run
	}{
		{"a count per window", sim.QuotaModel{Limit: 30, Window: time.Second, Latency: 5 * time.Millisecond}, 30 * seconds},
		{"time slots", sim.QuotaModel{Rate: quota.Rate{N: 30, Per: time.Second}, Latency: 5 * time.Millisecond}, 30*seconds + 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			type counts struct {
				sent, granted int64
				workers       [2]permits.Tally
			}
			run := func() counts {
				model := c.model
				ws := [2]*sim.SharedQuota{sim.NewSharedQuota(&model, false, 100*time.Millisecond), sim.NewSharedQuota(&model, false, 100*time.Millisecond)}
				cfg := sim.DefaultConfig(4)
				cfg.Quota = func(g int) firing.Quota { return ws[g%2] }
				r, err := sim.Run(sc, alg, cfg)
				if err != nil {
					t.Fatalf("sim.Run: %v", err)
				}
				var got counts
				for _, n := range r.Series.Sent {
					got.sent += n
				}
				got.granted = model.Granted
				got.workers = [2]permits.Tally{ws[0].Tally(), ws[1].Tally()}
				return got
			}
			a, b := run(), run()
			if a != b {
				t.Errorf("two runs differ: %+v and %+v", a, b)
			}
			t.Logf("sent %d, granted %d; workers %+v", a.sent, a.granted, a.workers)
			if a.sent > a.granted || a.granted > c.most || a.sent < c.most/2 {
				t.Errorf("sent %d on %d granted; want at most the grants, at most %d granted, and at least %d sent", a.sent, a.granted, c.most, c.most/2)
			}
			for i, w := range a.workers {
				if w.Requests == 0 || w.Permits == 0 {
					t.Errorf("worker %d: %d round trips, %d permits; want some of each", i, w.Requests, w.Permits)
				}
			}
		})
	}
}
