package adaptive

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// PacerConfig configures a [Pacer]. The zero value is valid, and zero
// fields mean the documented defaults, chosen on the whole simulator suite
// rather than on one scenario.
type PacerConfig struct {
	// StartRate is the rate, in requests per second, at which slow start
	// begins (StartRate × the typical cost in cost units per second: see
	// [Pacer]). Zero means 5; it must otherwise be positive.
	StartRate float64
	// Beta is the share of the rate kept by the first decrease of a
	// congestion, in (0, 1). Zero means 0.9.
	Beta float64
	// Recover is how long the cubic curve takes to climb back to the rate
	// before a decrease. Zero means 3 seconds; negative is an error.
	Recover time.Duration
	// Backoff is the share of the rate kept by each further decrease
	// while the backend still rejects everything after one, in (0, 1].
	// Zero means 0.7.
	Backoff float64
	// MinRate is the lowest rate, in requests per second (MinRate × the
	// typical cost in cost units per second: see [Pacer]), at most
	// StartRate. Zero means one request every 5 seconds, so that a Pacer
	// keeps probing a backend that rejects everything without Retry-After
	// (an outage, a used-up quota window) and finds it back within
	// seconds, at a cost of at most 12 rejected requests a minute.
	MinRate float64
	// Rate is the backend's known rate, in cost units per second, where a
	// caller knows it (a quota handed out as time slots): the Pacer starts
	// there, on the flat part of its cubic curve with Rate as the ceiling,
	// instead of slow-starting from StartRate, and never goes above it; it
	// still cuts below it on rejections and climbs back. Zero means not
	// known: slow start, and no bound but the backend's answers.
	Rate float64
	// Groups is how many groups, each with its own Pacer, share the
	// backend; zero means 1. Each probes more gently the more there are
	// (the cubic curve takes Groups × Recover to climb back), so that the
	// backend sees about as many probes from all of them together as from
	// one.
	Groups int
}

// Defaults of PacerConfig (documented there), and the Pacer's fixed
// bounds.
const (
	defaultStartRate = 5.0
	defaultBeta      = 0.9
	defaultRecover   = 3 * time.Second
	defaultBackoff   = 0.7
	defaultMinRate   = 1.0 / 5
	// retryAfterSlack is subtracted from a Retry-After before the Pacer
	// honours it (see [Pacer]).
	retryAfterSlack = time.Second
	// maxRate bounds the rate, in cost units per second.
	maxRate = 1e12
)

// steadyBand and steadyMargin shape the curve under a steady ceiling (see
// [Pacer]): a congestion within steadyBand of the ceiling before it makes
// the ceiling steady, and the curve then flattens steadyMargin below it.
// A tenth is the Pacer's own first cut (Beta's default): a congestion
// closer than one cut to the last is at the same limit. A hundredth costs
// a hundredth of the throughput at most.
const (
	steadyBand   = 0.1
	steadyMargin = 0.01
)

// unitWeight is the weight of each request's cost in the Pacer's unit, an
// exponentially weighted moving average. 1/8 is the weight of a new sample
// in TCP's smoothed round-trip time (RFC 6298): the unit follows a change
// of the cost mix within a few dozen requests, while one odd request moves
// it by an eighth of its difference at most. It is also the weight of a
// new sample in the Pacer's latency average, in AdvertisedRate's averaged
// target and refill rate, and (as 1/unitWeight answers) in the average use
// of an advertised limit.
const unitWeight = 1.0 / 8

// maxUnit bounds the unit: the largest cost, math.MaxInt64, as a float64.
const maxUnit = float64(math.MaxInt64)

// withDefaults fills zero fields.
func (c PacerConfig) withDefaults() PacerConfig {
	c.StartRate = cmp.Or(c.StartRate, defaultStartRate)
	c.Beta = cmp.Or(c.Beta, defaultBeta)
	c.Recover = cmp.Or(c.Recover, defaultRecover)
	c.MinRate = cmp.Or(c.MinRate, defaultMinRate)
	c.Backoff = cmp.Or(c.Backoff, defaultBackoff)
	c.Groups = cmp.Or(c.Groups, 1)
	return c
}

// validate reports whether c, with defaults, describes a usable Pacer. The
// error names the field.
func (c PacerConfig) validate() error {
	d := c.withDefaults()
	switch {
	case !(d.StartRate > 0) || d.StartRate > maxRate:
		return fmt.Errorf("adaptive: PacerConfig.StartRate must be in (0, %v], got %v", maxRate, c.StartRate)
	case !(d.Beta > 0 && d.Beta < 1):
		return fmt.Errorf("adaptive: PacerConfig.Beta must be in (0, 1), got %v", c.Beta)
	case !(d.Backoff > 0 && d.Backoff <= 1):
		return fmt.Errorf("adaptive: PacerConfig.Backoff must be in (0, 1], got %v", c.Backoff)
	case d.Recover <= 0:
		return fmt.Errorf("adaptive: PacerConfig.Recover must be positive, got %v", c.Recover)
	case !(d.MinRate > 0) || d.MinRate > d.StartRate:
		return fmt.Errorf("adaptive: PacerConfig.MinRate must be in (0, StartRate], got %v", c.MinRate)
	case !(d.Rate >= 0) || d.Rate > maxRate:
		return fmt.Errorf("adaptive: PacerConfig.Rate must be in [0, %v], got %v", maxRate, c.Rate)
	case d.Groups < 1 || d.Groups > 1<<20:
		return fmt.Errorf("adaptive: PacerConfig.Groups must be in [1, %d], got %d", 1<<20, c.Groups)
	}
	return nil
}
