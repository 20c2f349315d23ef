package adaptive_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		cfg       adaptive.SREConfig
		wantField string // "" means valid
	}{
		{"zero value", adaptive.SREConfig{}, ""},
		{"K 1.1", adaptive.SREConfig{K: 1.1}, ""},
		{"K below 1", adaptive.SREConfig{K: 0.5}, ""},
		{"K negative", adaptive.SREConfig{K: -1}, "K"},
		{"K NaN", adaptive.SREConfig{K: math.NaN()}, "K"},
		{"K +Inf", adaptive.SREConfig{K: math.Inf(1)}, "K"},
		{"K -Inf", adaptive.SREConfig{K: math.Inf(-1)}, "K"},
		{"negative ResetInterval", adaptive.SREConfig{ResetInterval: -time.Second}, "ResetInterval"},
		{"negative WindowSize", adaptive.SREConfig{Sliding: true, WindowSize: -time.Second}, "WindowSize"},
		{"negative WindowSize in FixedReset", adaptive.SREConfig{WindowSize: -time.Second}, "WindowSize"},
		{"negative Bucket", adaptive.SREConfig{Sliding: true, Bucket: -time.Second}, "Bucket"},
		{"sliding defaults", adaptive.SREConfig{Sliding: true}, ""},
		{"Bucket equals WindowSize", adaptive.SREConfig{Sliding: true, WindowSize: time.Second, Bucket: time.Second}, ""},
		{"Bucket exceeds WindowSize", adaptive.SREConfig{Sliding: true, WindowSize: time.Second, Bucket: 2 * time.Second}, "Bucket"},
		{"Bucket exceeds default WindowSize", adaptive.SREConfig{Sliding: true, Bucket: time.Hour}, "Bucket"},
		{"Bucket exceeds WindowSize in FixedReset is ignored", adaptive.SREConfig{WindowSize: time.Second, Bucket: time.Hour}, ""},
		{"MaxBuckets buckets", adaptive.SREConfig{Sliding: true, WindowSize: adaptive.MaxBuckets * time.Millisecond, Bucket: time.Millisecond}, ""},
		{"too many buckets", adaptive.SREConfig{Sliding: true, WindowSize: adaptive.MaxBuckets*time.Millisecond + 1, Bucket: time.Millisecond}, "Bucket"},
		{"nanosecond buckets", adaptive.SREConfig{Sliding: true, WindowSize: time.Hour, Bucket: 1}, "Bucket"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			_, sreErr := adaptive.NewSRE(tc.cfg, nil, 0)
			if tc.wantField == "" {
				if err != nil || sreErr != nil {
					t.Errorf("got errors (%v, %v), want nil", err, sreErr)
				}
				return
			}
			if err == nil {
				t.Fatalf("got nil error, want one naming %s", tc.wantField)
			}
			var ce *adaptive.ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.wantField {
				t.Errorf("got error %v, want an *adaptive.ConfigError for %s", err, tc.wantField)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "adaptive: "+tc.wantField+" ") {
				t.Errorf("got error %q, want it to begin with %q", msg, "adaptive: "+tc.wantField+" ")
			}
			if sreErr == nil || sreErr.Error() != msg {
				t.Errorf("got NewSRE error %v, want %q", sreErr, msg)
			}
		})
	}
}

// TestZeroMeansDefaults: zero fields decide exactly as the documented
// defaults do, in each window.
func TestZeroMeansDefaults(t *testing.T) {
	tests := []struct {
		name     string
		zero     adaptive.SREConfig
		explicit adaptive.SREConfig
	}{
		{"fixed", adaptive.SREConfig{}, adaptive.SREConfig{K: 2, ResetInterval: time.Minute}},
		{"sliding", adaptive.SREConfig{Sliding: true},
			adaptive.SREConfig{K: 2, Sliding: true, WindowSize: 2 * time.Minute, Bucket: time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mustNew(t, tc.zero, constRand(0.3)), mustNew(t, tc.explicit, constRand(0.3))
			now := t0
			for i := range 600 {
				now = now.Add(777 * time.Millisecond)
				da, db := a.Decide(now, 0, 1), b.Decide(now, 0, 1)
				if da != db {
					t.Fatalf("request %d: got %+v with zero fields, %+v with the defaults", i, da, db)
				}
				if da.Verdict == adaptive.Send {
					o := adaptive.Outcome(i % 3)
					record(a, now, o)
					record(b, now, o)
				}
			}
		})
	}
}

// TestNilRandReproducible checks that nil rnd gives a source seeded from
// SREConfig.Seed (a fixed seed when zero).
func TestNilRandReproducible(t *testing.T) {
	run := func(seed uint64) []bool {
		th := mustNew(t, adaptive.SREConfig{Seed: seed}, nil)
		var got []bool
		for range 200 {
			allow, _ := decide(th, t0)
			if allow {
				record(th, t0, adaptive.Throttled)
			}
			got = append(got, allow)
		}
		return got
	}
	if diff := cmp.Diff(run(0), run(adaptive.DefaultSeed)); diff != "" {
		t.Errorf("Seed 0 and DefaultSeed differ (-0 +default):\n%s", diff)
	}
	if diff := cmp.Diff(run(1), run(1)); diff != "" {
		t.Errorf("two runs with Seed 1 differ:\n%s", diff)
	}
	if cmp.Equal(run(1), run(2)) {
		t.Errorf("got identical decisions for Seed 1 and 2, want different")
	}
}

// TestValidateReportsEveryFault: Validate names every field at fault, not
// only the first.
func TestValidateReportsEveryFault(t *testing.T) {
	err := adaptive.SREConfig{K: -1, ResetInterval: -1, Sliding: true, Bucket: -1}.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *adaptive.ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("error %v is not an *adaptive.ConfigError", e)
		}
		got = append(got, ce.Field)
	}
	if want := []string{"K", "ResetInterval", "Bucket"}; !slices.Equal(got, want) {
		t.Errorf("got faults %q, want %q", got, want)
	}
}
