package quota_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// TestBackends: the built-in backend and the example's are registered, and
// nothing else (the backends over services are in packages of their own).
func TestBackends(t *testing.T) {
	if got, want := quota.Backends(), []string{"local", "window"}; !slices.Equal(got, want) {
		t.Errorf("Backends() = %q, want %q", got, want)
	}
}

// TestRegisterRefuses: Register panics for the names of no quota, a nil
// open function and a name taken.
func TestRegisterRefuses(t *testing.T) {
	open := func(context.Context, quota.Settings) (quota.Quota, error) { return quota.NoQuota{}, nil }
	for _, tc := range []struct {
		name string
		open func(context.Context, quota.Settings) (quota.Quota, error)
	}{
		{"", open},
		{"none", open},
		{"nil-open", nil},
		{"local", open},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", tc.name)
				}
			}()
			quota.Register(tc.name, tc.open)
		}()
	}
	if slices.Contains(quota.Backends(), "nil-open") {
		t.Error(`Register("nil-open", nil) registered it`)
	}
}

// TestOpenUnknown: a name nobody registered is refused with the names of
// those registered.
func TestOpenUnknown(t *testing.T) {
	q, err := quota.Open(context.Background(), "redis", quota.Settings{Addr: "h:1", Key: "k"})
	if err == nil || !strings.Contains(err.Error(), `no backend "redis" (registered: local, window)`) {
		t.Errorf("Open(redis) without its package = %v, %v; want an error naming local and window", q, err)
	}
}

// TestOpenLocal: the built-in backend checks its settings, each fault a
// *ConfigError naming its field, and opens Slots that hand out time slots
// and grant no counts.
func TestOpenLocal(t *testing.T) {
	rate := quota.Rate{N: 10, Per: time.Second}
	for _, tc := range []struct {
		s      quota.Settings
		fields []string // at fault
	}{
		{quota.Settings{Rate: rate}, nil},
		{quota.Settings{Rate: rate, Key: "k", Shares: quota.Shares{High: 0.5}}, nil},
		{quota.Settings{}, []string{"Rate"}},
		{quota.Settings{Rate: quota.Rate{N: -1, Per: time.Second}, Addr: "h:1"}, []string{"Rate", "Addr"}},
		{quota.Settings{Rate: rate, Shares: quota.Shares{Normal: 1}}, []string{"Shares"}},
	} {
		q, err := quota.Open(context.Background(), "local", tc.s)
		var fields []string
		for _, e := range unjoin(err) {
			ce, ok := errors.AsType[*quota.ConfigError](e)
			if !ok {
				t.Errorf("%+v: %v is not a *quota.ConfigError", tc.s, e)
				continue
			}
			fields = append(fields, ce.Field)
		}
		if !slices.Equal(fields, tc.fields) {
			t.Errorf("%+v: faults of %q (%v), want %q", tc.s, fields, err, tc.fields)
		}
		if err != nil {
			continue
		}
		if _, ok := q.(quota.Reserver); !ok {
			t.Errorf("%+v: %T is not a Reserver", tc.s, q)
		}
		if g, err := q.Take(context.Background(), "k", 1, time.Now()); err == nil {
			t.Errorf("%+v: Take = %+v, nil; want an error: the local quota grants no counts", tc.s, g)
		}
	}
}

// unjoin returns the errors joined in err, or err alone, or none.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}
