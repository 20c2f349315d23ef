package redisquota_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
)

// faults returns the fields of the *quota.ConfigErrors joined in err.
func faults(t *testing.T, err error) []string {
	t.Helper()
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	var fields []string
	for _, e := range errs {
		ce, ok := errors.AsType[*quota.ConfigError](e)
		if !ok {
			t.Errorf("%v is not a *quota.ConfigError", e)
			continue
		}
		fields = append(fields, ce.Field)
	}
	return fields
}

// TestOpen: importing the package registers "redis", which checks its
// settings, each fault a *quota.ConfigError naming its field, without
// contacting the server; it hands out time slots without a burst, and
// counts with one.
func TestOpen(t *testing.T) {
	if !slices.Contains(quota.Backends(), "redis") {
		t.Fatalf("Backends() = %q, want redis among them", quota.Backends())
	}
	rate := quota.Rate{N: 10, Per: time.Second}
	for _, tc := range []struct {
		name   string
		s      quota.Settings
		fields []string // at fault
		slots  bool
	}{
		{"slots", quota.Settings{Addr: "h:1", Key: "k", Rate: rate}, nil, true},
		{"burst of 1: slots", quota.Settings{Addr: "h:1", Key: "k", Rate: rate, Burst: 1}, nil, true},
		{"shares", quota.Settings{Addr: "h:1", Key: "k", Rate: rate, Shares: quota.Shares{High: 0.5}}, nil, true},
		{"counts", quota.Settings{Addr: "h:1", Key: "k", Rate: rate, Burst: 10}, nil, false},
		{"nothing", quota.Settings{}, []string{"Rate", "Addr", "Key"}, false},
		{"negative burst", quota.Settings{Addr: "h:1", Key: "k", Rate: rate, Burst: -1}, []string{"Burst"}, false},
		{"address not host:port", quota.Settings{Addr: "localhost", Key: "k", Rate: rate}, []string{"Addr"}, false},
		{"rate too large", quota.Settings{Addr: "h:1", Key: "k", Rate: quota.Rate{N: 1 << 31, Per: time.Hour}}, []string{"Rate"}, false},
		{"burst too large", quota.Settings{Addr: "h:1", Key: "k", Rate: rate, Burst: 1 << 30}, []string{"Burst"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := quota.Open(context.Background(), "redis", tc.s)
			if got := faults(t, err); !slices.Equal(got, tc.fields) {
				t.Fatalf("faults of %q (%v), want %q", got, err, tc.fields)
			}
			if err != nil {
				return
			}
			defer q.(io.Closer).Close()
			if _, ok := q.(quota.Reserver); ok != tc.slots {
				t.Errorf("%T is a quota.Reserver: %v, want %v", q, ok, tc.slots)
			}
			if _, ok := q.(quota.Checker); !ok {
				t.Errorf("%T is not a quota.Checker", q)
			}
		})
	}
}

// TestOpenCheck: the quota of the backend checks its key's rate and burst
// in Redis (CheckRate): a client with another rate on the key is refused
// with a *quota.ConfigError for Rate holding the *RateMismatchError.
func TestOpenCheck(t *testing.T) {
	rd := services.StartRedis(t)
	key := "check-" + uuid.NewString()
	open := func(rate quota.Rate, burst int) quota.Checker {
		t.Helper()
		q, err := quota.Open(context.Background(), "redis", quota.Settings{Addr: rd.Addr, Key: key, Rate: rate, Burst: burst})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.(io.Closer).Close() })
		return q.(quota.Checker)
	}
	ctx := context.Background()
	if err := open(quota.Rate{N: 10, Per: time.Second}, 0).Check(ctx); err != nil {
		t.Fatalf("first client: %v", err)
	}
	if err := open(quota.Rate{N: 600, Per: time.Minute}, 1).Check(ctx); err != nil {
		t.Errorf("the same rate, written otherwise: %v", err)
	}
	err := open(quota.Rate{N: 20, Per: time.Second}, 0).Check(ctx)
	ce, ok := errors.AsType[*quota.ConfigError](err)
	if _, mismatch := errors.AsType[*redisquota.RateMismatchError](err); !ok || ce.Field != "Rate" || !mismatch {
		t.Errorf("another rate: %v, want a *quota.ConfigError for Rate holding a *redisquota.RateMismatchError", err)
	}
	rd.Kill()
	if err := open(quota.Rate{N: 10, Per: time.Second}, 0).Check(ctx); err == nil {
		t.Error("Redis down: nil, want an error")
	} else if _, ok := errors.AsType[*quota.ConfigError](err); ok {
		t.Errorf("Redis down: %v, want an error that is not a *quota.ConfigError", err)
	}
}
