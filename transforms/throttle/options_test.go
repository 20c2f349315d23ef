package throttle

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// TestOptionOrder: the options compose field by field, so every order of
// the same options gives the same configuration (the algorithm's settings
// included: no option resets another's).
func TestOptionOrder(t *testing.T) {
	opts := []Option{WithSRE(adaptive.SREConfig{K: 1.5, Sliding: true, WindowSize: time.Minute, Bucket: 2 * time.Second,
		CountFailuresAsRejects: true}), WithMode(ModeSRE), WithGroups(3), WithStrategy(Retry), WithSeed(9)}
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
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(config{}, hook{})); diff != "" {
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

// TestValidateOptions: each fault is reported as an *OptionError naming the
// option (and, for an option taking several values, the one at fault), the
// algorithm's settings included, all of them at once, and in any order of
// the options.
func TestValidateOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want []string // options (OptionError.Option, or Option.Field) at fault
	}{
		{"defaults", nil, nil},
		{"zero groups", []Option{WithGroups(0)}, []string{"WithGroups"}},
		{"zero batch size", []Option{WithBatchSize(0)}, []string{"WithBatchSize"}},
		{"zero batch interval", []Option{WithBatchInterval(0)}, []string{"WithBatchInterval"}},
		{"zero max attempts", []Option{WithMaxAttempts(0)}, []string{"WithMaxAttempts"}},
		{"zero max age", []Option{WithMaxAge(0)}, []string{"WithMaxAge"}},
		{"zero call timeout", []Option{WithCallTimeout(0)}, []string{"WithCallTimeout"}},
		{"negative calls in flight", []Option{WithCallsInFlight(-1)}, []string{"WithCallsInFlight"}},
		{"negative max buffered", []Option{WithMaxBuffered(-1)}, []string{"WithMaxBuffered"}},
		{"negative max wait", []Option{WithMaxWait(-time.Second)}, []string{"WithMaxWait"}},
		{"negative max stall", []Option{WithMaxStall(-time.Second)}, []string{"WithMaxStall"}},
		{"negative max payload", []Option{WithMaxPayloadBytes(-1)}, []string{"WithMaxPayloadBytes"}},
		{"bad strategy", []Option{WithStrategy("sometimes")}, []string{"WithStrategy"}},
		{"bad scope", []Option{WithScope("process")}, []string{"WithScope"}},
		{"zero K is the default", []Option{WithSRE(adaptive.SREConfig{K: 0})}, nil},
		{"negative K", []Option{WithSRE(adaptive.SREConfig{K: -1})}, []string{"WithSRE.K"}},
		{"bad mode", []Option{WithMode("fast")}, []string{"WithMode"}},
		{"mode in capitals", []Option{WithMode("SRE")}, nil},
		{"bucket over window", []Option{WithSRE(adaptive.SREConfig{Sliding: true, WindowSize: time.Second, Bucket: time.Minute})},
			[]string{"WithSRE.Bucket"}},
		{"the last WithSRE counts", []Option{WithSRE(adaptive.SREConfig{K: -1}), WithSRE(adaptive.SREConfig{K: 3})}, nil},
		{"quota without address", []Option{WithQuota(QuotaConfig{Backend: quotaRedis, Key: "k", Rate: "10/s"})}, []string{"WithQuota.Addr"}},
		{"quota address not host:port", []Option{WithQuota(QuotaConfig{Backend: quotaEnvoy, Addr: "localhost", Key: "k", Domain: "d"})},
			[]string{"WithQuota.Addr"}},
		{"several at once", []Option{WithGroups(0), WithSRE(adaptive.SREConfig{K: -1}), WithBatchSize(0), WithQuota(QuotaConfig{Backend: "memcached"})},
			[]string{"WithGroups", "WithBatchSize", "WithQuota.Backend", "WithSRE.K"}},
		{"negative reset interval", []Option{WithSRE(adaptive.SREConfig{ResetInterval: -time.Second})}, []string{"WithSRE.ResetInterval"}},
		{"negative window size", []Option{WithSRE(adaptive.SREConfig{Sliding: true, WindowSize: -time.Second})},
			[]string{"WithSRE.WindowSize"}},
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

// faults names the settings of the *OptionErrors in err, the one error
// type of the package: no *adaptive.ConfigError may be found in it.
func faults(t *testing.T, err error) []string {
	t.Helper()
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, faults(t, e)...)
		}
		return out
	}
	if ce, ok := errors.AsType[*adaptive.ConfigError](err); ok {
		t.Errorf("error %v holds an *adaptive.ConfigError (field %s), want only an *OptionError", err, ce.Field)
	}
	var oe *OptionError
	switch {
	case errors.As(err, &oe) && oe.Field != "":
		return []string{oe.Option + "." + oe.Field}
	case errors.As(err, &oe):
		return []string{oe.Option}
	}
	t.Errorf("error %v (%T) is not an *OptionError", err, err)
	return nil
}

// TestTryAdaptiveOptionError: a user finds every option at fault with
// errors.As through TryAdaptive's error, the algorithm's settings' too.
func TestTryAdaptiveOptionError(t *testing.T) {
	_, s := beam.NewPipelineWithRoot()
	_, err := TryAdaptive(s, beam.Create(s, []byte("x")), mixCaller{}, WithBatchSize(0), WithSRE(adaptive.SREConfig{K: -1}))
	var oe *OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("got error %v, want an *OptionError within it", err)
	}
	var got []string
	for _, e := range errors.Unwrap(err).(interface{ Unwrap() []error }).Unwrap() {
		got = append(got, faults(t, e)...)
	}
	if diff := cmp.Diff([]string{"WithBatchSize", "WithSRE.K"}, got); diff != "" {
		t.Errorf("faults differ (-want +got):\n%s\nerror: %v", diff, err)
	}
}

// TestStrategyNames: WithStrategy takes the original tool's names too.
func TestStrategyNames(t *testing.T) {
	for in, want := range map[Strategy]Strategy{
		"dlq": Route, "DLQ": Route, "DROP": Drop, "RETRY": Retry, "POSTPONE": Postpone,
		Route: Route, Drop: Drop, Retry: Retry, Postpone: Postpone,
	} {
		cfg, err := newConfig([]Option{WithStrategy(in)})
		if err != nil || cfg.Strategy != want {
			t.Errorf("WithStrategy(%q): got strategy %q, error %v; want %q", in, cfg.Strategy, err, want)
		}
	}
}
