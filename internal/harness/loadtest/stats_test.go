package loadtest

import (
	"math"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestFit(t *testing.T) {
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for _, tc := range []struct {
		name           string
		samples        []Sample
		warmup         time.Duration
		slope          float64
		goStart, goEnd int
	}{
		{"flat", []Sample{{at(60), 10, 5}, {at(120), 10, 5}, {at(180), 10, 5}}, 0, 0, 5, 5},
		{"2MB/min after warm-up", []Sample{{at(0), 99, 1}, {at(60), 10, 7}, {at(120), 12, 8}, {at(180), 14, 9}}, at(30), 2, 7, 9},
		{"one sample", []Sample{{at(60), 10, 3}}, 0, 0, 3, 3},
		{"same time", []Sample{{at(60), 10, 3}, {at(60), 20, 4}}, 0, 0, 3, 4},
		{"none", nil, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slope, gs, ge := fit(tc.samples, tc.warmup)
			if math.Abs(slope-tc.slope) > 1e-9 || gs != tc.goStart || ge != tc.goEnd {
				t.Errorf("fit: got %v, %d, %d, want %v, %d, %d", slope, gs, ge, tc.slope, tc.goStart, tc.goEnd)
			}
		})
	}
}

func TestSteadiness(t *testing.T) {
	series := []testserver.Second{{T: 100, Accepted: 50}, {T: 101, Accepted: 90}, {T: 102, Accepted: 110}, {T: 103, Accepted: 5}}
	// Warm-up of 1 s leaves out the first second; the last is partial.
	mean, sd := steadiness(series, time.Second)
	if mean != 100 || sd != 10 {
		t.Errorf("steadiness: got %v ± %v, want 100 ± 10", mean, sd)
	}
	if mean, sd := steadiness(series[:2], 0); mean != 0 || sd != 0 {
		t.Errorf("steadiness of two seconds: got %v ± %v, want 0 ± 0", mean, sd)
	}
}
