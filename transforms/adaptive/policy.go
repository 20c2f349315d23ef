package adaptive

import (
	"errors"
	"time"
)

// Verdict is what a [Policy] decides about the request being attempted.
type Verdict int

const (
	// Send means send the request now.
	Send Verdict = iota
	// Postpone means not now: keep the request and ask again at
	// Decision.RetryAt.
	Postpone
	// Reject means reject the request locally, without sending it (the SRE
	// throttle's r < p).
	Reject
)

// String returns the name of the verdict.
func (v Verdict) String() string {
	switch v {
	case Send:
		return "Send"
	case Postpone:
		return "Postpone"
	case Reject:
		return "Reject"
	}
	return "Verdict(?)"
}

// Decision is a [Policy]'s answer for one request.
type Decision struct {
	Verdict Verdict
	// RetryAt is, for Postpone, the earliest time at which asking again can
	// give another answer (the next token of a pacer, the end of a
	// Retry-After). It is zero for Send and Reject.
	RetryAt time.Time
	// Probability is the local rejection probability behind the verdict,
	// for records and metrics: the SRE throttle's p, or, for a pacer, the
	// share of recent requests it held back.
	Probability float64
}

// Answer is what became of a request a [Policy] let through.
type Answer struct {
	// Outcome classifies the answer.
	Outcome Outcome
	// Sent is when the request was sent (the time of its Send decision);
	// a policy may ignore answers to requests sent before it last reacted.
	Sent time.Time
	// RetryAfter is the backend's Retry-After, 0 if none.
	RetryAfter time.Duration
}

// ErrState is returned, or wrapped, by UnmarshalBinary for state it does
// not recognise.
var ErrState = errors.New("adaptive: unrecognised policy state")

// Policy is the throttling rule of one group: it decides, request by
// request, whether to send now, postpone or reject, and learns from the
// answers. Time is passed in, never read; a Policy is deterministic given
// its inputs and its random source, and is not safe for concurrent use.
//
// Its state can be saved between uses (for example in Beam state between
// firings) with MarshalBinary and restored with UnmarshalBinary. The
// encoding is opaque and versioned: a Policy refuses, with an error, state
// it does not recognise, and the caller then starts afresh.
type Policy interface {
	// Decide decides on the request attempted at now, with inFlight
	// requests sent and not answered yet.
	Decide(now time.Time, inFlight int) Decision
	// Record learns the answer, observed at now, to a request Decide let
	// through.
	Record(now time.Time, a Answer)
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}

// Coster is implemented by policies that charge each request its cost, for
// backends whose quota counts something other than requests: tokens (an
// LLM API's tokens per minute), bytes, items of a batch. A request of cost
// 100 uses a hundred times the share of the quota of a request of cost 1.
//
// Costs are in the caller's unit, the same for every request of a policy.
// A cost of 0 is a free request: it is decided as any other but charged
// nothing. A negative cost counts as 0. DecideCost with cost 1 is Decide.
//
// [Pacer] and [Shared] are Costers. [SRE] is not: its rule counts requests,
// whatever they cost, and [DecideCost] asks it with Decide.
type Coster interface {
	// DecideCost is Decide for a request of the given cost.
	DecideCost(now time.Time, inFlight int, cost int) Decision
}

// DecideCost asks p about a request of the given cost: p.DecideCost if p
// is a [Coster], else p.Decide (one request whatever its cost).
func DecideCost(p Policy, now time.Time, inFlight int, cost int) Decision {
	if c, ok := p.(Coster); ok {
		return c.DecideCost(now, inFlight, cost)
	}
	return p.Decide(now, inFlight)
}
