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
		cfg       adaptive.Config
		wantField string // "" means valid
	}{
		{"zero value", adaptive.Config{}, ""},
		{"K 1.1", adaptive.Config{K: 1.1}, ""},
		{"K below 1", adaptive.Config{K: 0.5}, ""},
		{"K negative", adaptive.Config{K: -1}, "K"},
		{"K NaN", adaptive.Config{K: math.NaN()}, "K"},
		{"K +Inf", adaptive.Config{K: math.Inf(1)}, "K"},
		{"K -Inf", adaptive.Config{K: math.Inf(-1)}, "K"},
		{"unknown Window", adaptive.Config{Window: 2}, "Window"},
		{"negative Window", adaptive.Config{Window: -1}, "Window"},
		{"negative ResetInterval", adaptive.Config{ResetInterval: -time.Second}, "ResetInterval"},
		{"negative WindowSize", adaptive.Config{Window: adaptive.Sliding, WindowSize: -time.Second}, "WindowSize"},
		{"negative WindowSize in FixedReset", adaptive.Config{WindowSize: -time.Second}, "WindowSize"},
		{"negative Bucket", adaptive.Config{Window: adaptive.Sliding, Bucket: -time.Second}, "Bucket"},
		{"sliding defaults", adaptive.Config{Window: adaptive.Sliding}, ""},
		{"Bucket equals WindowSize", adaptive.Config{Window: adaptive.Sliding, WindowSize: time.Second, Bucket: time.Second}, ""},
		{"Bucket exceeds WindowSize", adaptive.Config{Window: adaptive.Sliding, WindowSize: time.Second, Bucket: 2 * time.Second}, "Bucket"},
		{"Bucket exceeds default WindowSize", adaptive.Config{Window: adaptive.Sliding, Bucket: time.Hour}, "Bucket"},
		{"Bucket exceeds WindowSize in FixedReset is ignored", adaptive.Config{WindowSize: time.Second, Bucket: time.Hour}, ""},
		{"MaxBuckets buckets", adaptive.Config{Window: adaptive.Sliding, WindowSize: adaptive.MaxBuckets * time.Millisecond, Bucket: time.Millisecond}, ""},
		{"too many buckets", adaptive.Config{Window: adaptive.Sliding, WindowSize: adaptive.MaxBuckets*time.Millisecond + 1, Bucket: time.Millisecond}, "Bucket"},
		{"nanosecond buckets", adaptive.Config{Window: adaptive.Sliding, WindowSize: time.Hour, Bucket: 1}, "Bucket"},
		{"unknown Mode", adaptive.Config{Mode: 2}, "Mode"},
		{"negative Mode", adaptive.Config{Mode: -1}, "Mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			_, newErr := adaptive.New(tc.cfg, nil)
			_, sreErr := adaptive.NewSRE(tc.cfg, nil, 0)
			if tc.wantField == "" {
				if err != nil || newErr != nil || sreErr != nil {
					t.Errorf("got errors (%v, %v, %v), want nil", err, newErr, sreErr)
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
			if newErr == nil || newErr.Error() != msg {
				t.Errorf("got New error %v, want %q", newErr, msg)
			}
			if sreErr == nil || sreErr.Error() != msg {
				t.Errorf("got NewSRE error %v, want %q", sreErr, msg)
			}
		})
	}
}

// TestNewNeedsModeSRE: ModePaced is a valid Config (it selects the Pacer),
// but not one for a Throttler or an SRE policy.
func TestNewNeedsModeSRE(t *testing.T) {
	cfg := adaptive.Config{Mode: adaptive.ModePaced}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
	if _, err := adaptive.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "ModeSRE") {
		t.Errorf("New with ModePaced: got error %v, want one naming ModeSRE", err)
	}
	if _, err := adaptive.NewSRE(cfg, nil, 0); err == nil {
		t.Error("NewSRE with ModePaced: got nil error, want one")
	}
}

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		cfg  adaptive.Config
		want adaptive.Config
	}{
		{
			name: "zero",
			cfg:  adaptive.Config{},
			want: adaptive.Config{K: 2, ResetInterval: time.Minute, WindowSize: 2 * time.Minute, Bucket: time.Second},
		},
		{
			name: "set fields kept",
			cfg: adaptive.Config{K: 1.1, Window: adaptive.Sliding, ResetInterval: time.Hour, WindowSize: time.Minute,
				Bucket: 100 * time.Millisecond, CountFailuresAsRejects: true, Seed: 7},
			want: adaptive.Config{K: 1.1, Window: adaptive.Sliding, ResetInterval: time.Hour, WindowSize: time.Minute,
				Bucket: 100 * time.Millisecond, CountFailuresAsRejects: true, Seed: 7},
		},
		{
			name: "invalid values kept",
			cfg:  adaptive.Config{K: -3, ResetInterval: -1},
			want: adaptive.Config{K: -3, ResetInterval: -1, WindowSize: 2 * time.Minute, Bucket: time.Second},
		},
		{
			name: "paced",
			cfg:  adaptive.Config{Mode: adaptive.ModePaced},
			want: adaptive.Config{K: 2, ResetInterval: time.Minute, WindowSize: 2 * time.Minute, Bucket: time.Second,
				Mode: adaptive.ModePaced},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.cfg.WithDefaults()); diff != "" {
				t.Errorf("WithDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThrottlerConfig(t *testing.T) {
	th := mustNew(t, adaptive.Config{K: 1.5}, nil)
	want := adaptive.Config{K: 1.5}.WithDefaults()
	if diff := cmp.Diff(want, th.Config()); diff != "" {
		t.Errorf("Config() mismatch (-want +got):\n%s", diff)
	}
}

// TestNilRandReproducible checks that nil rnd gives a source seeded from
// Config.Seed (DefaultSeed when zero).
func TestNilRandReproducible(t *testing.T) {
	run := func(seed uint64) []bool {
		th := mustNew(t, adaptive.Config{Seed: seed}, nil)
		var got []bool
		for range 200 {
			allow, _ := th.Decide(t0)
			if allow {
				th.Record(t0, adaptive.Throttled)
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

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    adaptive.Mode
		wantErr bool
	}{
		{"", adaptive.ModeSRE, false},
		{"sre", adaptive.ModeSRE, false},
		{"SRE", adaptive.ModeSRE, false},
		{"paced", adaptive.ModePaced, false},
		{"Paced", adaptive.ModePaced, false},
		{"PACED", adaptive.ModePaced, false},
		{"aimd", 0, true},
	}
	for _, tc := range tests {
		got, err := adaptive.ParseMode(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "adaptive: Mode ") {
			t.Errorf("ParseMode(%q) error %q, want it to begin with %q", tc.in, err, "adaptive: Mode ")
		}
	}
	for _, m := range []adaptive.Mode{adaptive.ModeSRE, adaptive.ModePaced} {
		if got, err := adaptive.ParseMode(strings.ToLower(m.String())); got != m || err != nil {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, nil", strings.ToLower(m.String()), got, err, m)
		}
	}
}

// TestValidateReportsEveryFault: Validate names every field at fault, not
// only the first.
func TestValidateReportsEveryFault(t *testing.T) {
	err := adaptive.Config{K: -1, ResetInterval: -1, Window: adaptive.Sliding, Bucket: -1, Mode: 9}.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *adaptive.ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("error %v is not an *adaptive.ConfigError", e)
		}
		got = append(got, ce.Field)
	}
	if want := []string{"K", "ResetInterval", "Bucket", "Mode"}; !slices.Equal(got, want) {
		t.Errorf("got faults %q, want %q", got, want)
	}
}

func TestParseWindow(t *testing.T) {
	tests := []struct {
		in      string
		want    adaptive.Window
		wantErr bool
	}{
		{"", adaptive.FixedReset, false},
		{"fixed", adaptive.FixedReset, false},
		{"FIXED", adaptive.FixedReset, false},
		{"FixedReset", adaptive.FixedReset, false},
		{"sliding", adaptive.Sliding, false},
		{"Sliding", adaptive.Sliding, false},
		{"weekly", 0, true},
	}
	for _, tc := range tests {
		got, err := adaptive.ParseWindow(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ParseWindow(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		var ce *adaptive.ConfigError
		if err != nil && (!errors.As(err, &ce) || ce.Field != "Window") {
			t.Errorf("ParseWindow(%q) error %v, want an *adaptive.ConfigError for Window", tc.in, err)
		}
	}
}

// TestNames: Name gives what ParseMode and ParseWindow take back.
func TestNames(t *testing.T) {
	for _, tc := range []struct {
		m    adaptive.Mode
		want string
	}{{adaptive.ModeSRE, "sre"}, {adaptive.ModePaced, "paced"}} {
		if got, err := adaptive.ParseMode(tc.m.Name()); tc.m.Name() != tc.want || got != tc.m || err != nil {
			t.Errorf("%v: Name() = %q, parsed back %v, %v; want %q, %v", tc.m, tc.m.Name(), got, err, tc.want, tc.m)
		}
	}
	for _, tc := range []struct {
		w    adaptive.Window
		want string
	}{{adaptive.FixedReset, "fixed"}, {adaptive.Sliding, "sliding"}} {
		if got, err := adaptive.ParseWindow(tc.w.Name()); tc.w.Name() != tc.want || got != tc.w || err != nil {
			t.Errorf("%v: Name() = %q, parsed back %v, %v; want %q, %v", tc.w, tc.w.Name(), got, err, tc.want, tc.w)
		}
	}
}
