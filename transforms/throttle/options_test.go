package throttle

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// TestOptionOrder: the options compose field by field, so every order of
// the same options gives the same configuration (the algorithm's settings
// included: no option resets another's).
func TestOptionOrder(t *testing.T) {
	opts := []Option{WithK(1.5), WithMode(ModeSRE), WithSlidingWindow(time.Minute, 2*time.Second),
		WithCountFailuresAsRejects(), WithGroups(3), WithStrategy(Retry), WithSeed(9)}
	want, err := newConfig(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := want.Adaptive; got.K != 1.5 || want.Mode != ModeSRE || !got.Sliding ||
		got.WindowSize != time.Minute || got.Bucket != 2*time.Second || !got.CountFailuresAsRejects {
		t.Errorf("got algorithm settings %+v, want each option's", got)
	}
	for i := range opts {
		// Rotate the options by i and reverse them.
		rotated := append(append([]Option{}, opts[i:]...), opts[:i]...)
		reversed := make([]Option, len(rotated))
		for j, o := range rotated {
			reversed[len(rotated)-1-j] = o
		}
		for _, order := range [][]Option{rotated, reversed} {
			got, err := newConfig(order)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{}), cmpopts.IgnoreFields(config{}, "windowOptions")); diff != "" {
				t.Errorf("rotation %d: config differs (-want +got):\n%s", i, diff)
			}
		}
	}
}

// TestDefaultConfig: without options, the algorithm's settings are
// adaptive's defaults (the zero SREConfig) and the mode is ModePaced.
func TestDefaultConfig(t *testing.T) {
	cfg, err := newConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(adaptive.SREConfig{}, cfg.Adaptive); diff != "" {
		t.Errorf("default algorithm settings differ (-want +got):\n%s", diff)
	}
	if cfg.Mode != ModePaced {
		t.Errorf("got mode %q, want %q", cfg.Mode, ModePaced)
	}
	if cfg.Strategy != Postpone || cfg.Scope != ScopeWorker {
		t.Errorf("got strategy %q, scope %q; want the paced mode's postpone and worker", cfg.Strategy, cfg.Scope)
	}
}

// TestValidateOptions: each fault is reported as a typed error naming the
// option (or, for the algorithm's settings, the adaptive.SREConfig field), all
// of them at once, and in any order of the options.
func TestValidateOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want []string // options (OptionError) or fields (adaptive.ConfigError) at fault
	}{
		{"defaults", nil, nil},
		{"zero groups", []Option{WithGroups(0)}, []string{"WithGroups"}},
		{"zero batch size", []Option{WithBatchSize(0)}, []string{"WithBatchSize"}},
		{"zero batch interval", []Option{WithBatchInterval(0)}, []string{"WithBatchInterval"}},
		{"zero max attempts", []Option{WithMaxAttempts(0)}, []string{"WithMaxAttempts"}},
		{"zero max age", []Option{WithMaxAge(0)}, []string{"WithMaxAge"}},
		{"zero call timeout", []Option{WithCallTimeout(0)}, []string{"WithCallTimeout"}},
		{"zero calls in flight", []Option{WithCallsInFlight(0)}, []string{"WithCallsInFlight"}},
		{"negative max buffered", []Option{WithMaxBuffered(-1)}, []string{"WithMaxBuffered"}},
		{"negative max wait", []Option{WithMaxWait(-time.Second)}, []string{"WithMaxWait"}},
		{"negative max stall", []Option{WithMaxStall(-time.Second)}, []string{"WithMaxStall"}},
		{"negative max payload", []Option{WithMaxPayloadBytes(-1)}, []string{"WithMaxPayloadBytes"}},
		{"bad strategy", []Option{WithStrategy("sometimes")}, []string{"WithStrategy"}},
		{"bad scope", []Option{WithScope("process")}, []string{"WithScope"}},
		{"zero K is the default", []Option{WithK(0)}, nil},
		{"negative K", []Option{WithK(-1)}, []string{"K"}},
		{"bad mode", []Option{WithMode("fast")}, []string{"WithMode"}},
		{"mode in capitals", []Option{WithMode("SRE")}, nil},
		{"bucket over window", []Option{WithSlidingWindow(time.Second, time.Minute)}, []string{"Bucket"}},
		{"two windows", []Option{WithResetInterval(time.Minute), WithSlidingWindow(0, 0)}, []string{"WithSlidingWindow"}},
		{"two windows, other order", []Option{WithSlidingWindow(0, 0), WithResetInterval(time.Minute)}, []string{"WithResetInterval"}},
		{"one window twice", []Option{WithResetInterval(time.Minute), WithResetInterval(time.Hour)}, nil},
		{"quota without address", []Option{WithQuota(QuotaConfig{Backend: RedisQuota, Key: "k", Rate: "10/s"})}, []string{"WithQuota.Addr"}},
		{"quota address not host:port", []Option{WithQuota(QuotaConfig{Backend: EnvoyQuota, Addr: "localhost", Key: "k", Domain: "d"})},
			[]string{"WithQuota.Addr"}},
		{"several at once", []Option{WithGroups(0), WithK(-1), WithBatchSize(0), WithQuota(QuotaConfig{Backend: "memcached"})},
			[]string{"WithGroups", "WithBatchSize", "WithQuota.Backend", "K"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateOptions(tc.opts...)
			var got []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					got = append(got, faults(t, e)...)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("faults differ (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// faults names the settings of the typed errors in err.
func faults(t *testing.T, err error) []string {
	t.Helper()
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, faults(t, e)...)
		}
		return out
	}
	var oe *OptionError
	var ce *adaptive.ConfigError
	switch {
	case errors.As(err, &oe) && oe.Field != "":
		return []string{oe.Option + "." + oe.Field}
	case errors.As(err, &oe):
		return []string{oe.Option}
	case errors.As(err, &ce):
		return []string{ce.Field}
	}
	t.Errorf("error %v (%T) is neither an *OptionError nor an *adaptive.ConfigError", err, err)
	return nil
}
