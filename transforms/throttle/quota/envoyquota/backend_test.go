package envoyquota_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// TestOpen: importing the package registers "envoy", which checks its
// settings, each fault a *quota.ConfigError naming its field (a parameter
// as Params.name), without contacting the service; its quota grants counts
// that lapse with their window.
func TestOpen(t *testing.T) {
	if !slices.Contains(quota.Backends(), "envoy") {
		t.Fatalf("Backends() = %q, want envoy among them", quota.Backends())
	}
	for _, tc := range []struct {
		name   string
		s      quota.Settings
		fields []string // at fault
	}{
		{"domain", quota.Settings{Addr: "h:1", Key: "k", Params: map[string]string{"domain": "d"}}, nil},
		{"descriptors", quota.Settings{Addr: "h:1", Key: "k", Params: map[string]string{"domain": "d", "descriptors": "a=b,c=d"}}, nil},
		{"nothing", quota.Settings{}, []string{"Params.domain", "Addr", "Key"}},
		{"bad descriptors", quota.Settings{Addr: "h:1", Key: "k", Params: map[string]string{"domain": "d", "descriptors": "a"}}, []string{"Params.descriptors"}},
		{"address not host:port", quota.Settings{Addr: "localhost", Key: "k", Params: map[string]string{"domain": "d"}}, []string{"Addr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := quota.Open(context.Background(), "envoy", tc.s)
			var fields []string
			var errs []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			} else if err != nil {
				errs = []error{err}
			}
			for _, e := range errs {
				if ce, ok := errors.AsType[*quota.ConfigError](e); ok {
					fields = append(fields, ce.Field)
				} else {
					t.Errorf("%v is not a *quota.ConfigError", e)
				}
			}
			if !slices.Equal(fields, tc.fields) {
				t.Fatalf("faults of %q (%v), want %q", fields, err, tc.fields)
			}
			if err != nil {
				return
			}
			defer q.(io.Closer).Close()
			if _, ok := q.(quota.Windowed); !ok {
				t.Errorf("%T is not a quota.Windowed", q)
			}
			if _, ok := q.(quota.Reserver); ok {
				t.Errorf("%T is a quota.Reserver: Envoy's service cannot hand out time slots", q)
			}
		})
	}
}
