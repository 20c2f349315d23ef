// Package redisquota keeps transforms/throttle's shared quota in Redis
// (Memorystore included), for every group, worker and job that uses the
// same server and key. Importing it registers the backend "redis" with
// package quota:
//
//	import _ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
//
// [Quota] is a GCRA in Redis in two forms. Its time slots ([Quota.Reserve])
// space every client's calls into one evenly spaced stream at the rate,
// which a strict limiter accepts; its counts ([Quota.Take], the GCRA of
// github.com/go-redis/redis_rate) grant partial batches of permits, with a
// burst. The backend "redis" hands out slots, or counts when
// quota.Settings.Burst is above 1. Every client of a key must use the same
// rate and burst: [CheckRate] records them in Redis and refuses others.
//
// Every Take, Reserve and Release is one round trip at most. Errors
// (server unreachable, answer later than ctx's deadline) are returned,
// wrapped, for the caller to fail open or closed; errors.Is finds
// context.DeadlineExceeded and context.Canceled in them.
package redisquota

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

func init() { quota.Register("redis", open) }

// open opens the backend "redis" for s: a GCRA in Redis at s.Addr
// (host:port) under s.Key, both required, at s.Rate (required). With
// s.Burst above 1 it grants counts from a bucket of that many permits;
// otherwise it hands out time slots (it is a quota.Reserver), with
// s.Shares. Params are not used. It does not contact the server; the
// Quota it returns checks the key's rate and burst (quota.Checker, see
// CheckRate) and is an io.Closer.
func open(_ context.Context, s quota.Settings) (quota.Quota, error) {
	var errs []error
	bad := func(field string, err error) { errs = append(errs, &quota.ConfigError{Field: field, Err: err}) }
	if s.Rate == (quota.Rate{}) {
		bad("Rate", errors.New("required with the redis backend"))
	} else if err := s.Rate.Validate(); err != nil {
		bad("Rate", err)
	}
	if s.Burst < 0 {
		bad("Burst", fmt.Errorf("must be >= 0, got %d", s.Burst))
	}
	if len(errs) == 0 {
		if _, _, err := units(s.Rate, slotsBurst(s.Burst)); err != nil {
			field := "Rate"
			if _, _, err := units(s.Rate, 0); err == nil {
				field = "Burst" // the rate alone is fine
			}
			bad(field, err)
		}
	}
	if s.Addr == "" {
		bad("Addr", errors.New("required with the redis backend"))
	} else if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		bad("Addr", fmt.Errorf("want host:port, got %q", s.Addr))
	}
	if s.Key == "" {
		bad("Key", errors.New("required with the redis backend"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	q, err := New(Config{Addr: s.Addr, Rate: s.Rate, Burst: slotsBurst(s.Burst), Shares: s.Shares})
	if err != nil {
		return nil, err
	}
	b := backend{q: q, key: s.Key, rate: s.Rate, burst: s.Burst}
	if s.Burst > 1 {
		return counts{b}, nil
	}
	return slots{q, b}, nil
}

// slotsBurst is the Burst of the Config of a backend of burst: 0 (the
// default, which Take of a quota of slots uses) for 0 and 1.
func slotsBurst(burst int) int {
	if burst <= 1 {
		return 0
	}
	return burst
}

// backend is what the Quota of the backend "redis" knows besides its
// GCRA: the key and what CheckRate records for it.
type backend struct {
	q     *Quota
	key   string
	rate  quota.Rate
	burst int
}

// Check records the key's rate and burst in Redis, or returns a
// *quota.ConfigError for Rate holding the *RateMismatchError of a key
// recorded with others; see CheckRate.
func (b backend) Check(ctx context.Context) error {
	err := CheckRate(ctx, b.q.client, b.key, b.rate, b.burst)
	if _, ok := errors.AsType[*RateMismatchError](err); ok {
		return &quota.ConfigError{Field: "Rate", Err: err}
	}
	return err
}

// Close closes the client.
func (b backend) Close() error { return b.q.Close() }

// slots is the backend "redis" without a burst: a quota.Reserver.
type slots struct {
	*Quota
	backend
}

// Close closes the client.
func (s slots) Close() error { return s.backend.Close() }

// counts is the backend "redis" with a burst: counts of permits only.
type counts struct{ backend }

// Take takes n permits for key; see [Quota.Take].
func (c counts) Take(ctx context.Context, key string, n int, now time.Time) (quota.Grant, error) {
	return c.q.Take(ctx, key, n, now)
}

// wrap returns err with the package's prefix and the message made of format
// and args, and ctx's error if ctx is done, for errors.Is to find even when
// the client reports it as a network timeout.
func wrap(ctx context.Context, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("redisquota: %s: %w: %w", msg, cerr, err)
	}
	return fmt.Errorf("redisquota: %s: %w", msg, err)
}
