package quota

import (
	"context"
	"errors"
	"time"
)

// The built-in backend "local": a known rate kept in the worker's memory.
func init() { Register("local", openLocal) }

// openLocal opens the backend "local": [Slots] at s.Rate (required), with
// s.Shares, for the callers of one process; nothing is shared with other
// processes, so there is no service and Addr must not be set. Key and
// Params are not used.
func openLocal(_ context.Context, s Settings) (Quota, error) {
	var errs []error
	if s.Rate == (Rate{}) {
		errs = append(errs, &ConfigError{Field: "Rate", Err: errors.New("required with the local backend")})
	} else if err := s.Rate.Validate(); err != nil {
		errs = append(errs, &ConfigError{Field: "Rate", Err: err})
	}
	if s.Addr != "" {
		errs = append(errs, &ConfigError{Field: "Addr", Err: errors.New("not used with the local backend")})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := s.Shares.Validate(); err != nil {
		return nil, &ConfigError{Field: "Shares", Err: err}
	}
	sl, err := NewSlots(SlotsConfig{Rate: s.Rate, Shares: s.Shares})
	if err != nil {
		return nil, &ConfigError{Field: "Rate", Err: err}
	}
	return local{sl}, nil
}

// local is the Quota of the backend "local": Slots, whose time slots
// transforms/throttle reserves; it grants no counts.
type local struct{ *Slots }

// Take grants nothing: the local quota hands out time slots.
func (local) Take(context.Context, string, int, time.Time) (Grant, error) {
	return Grant{}, errors.New("quota: the local backend hands out time slots (Reserve), not counts (Take)")
}
