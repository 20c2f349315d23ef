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
	// Received is when the answer came, if earlier than the Record that
	// reports it (a driver that collects answers now and then); zero
	// means the time of the Record. Sent to Received is the latency.
	Received time.Time
	// Quota holds the limits the answer advertised (how many
	// remain, when they come back), in the order the API sends them; nil
	// if none. The [Pacer] paces under them (see [AdvertisedRate]).
	Quota []Quota
}

// ErrState is returned, or wrapped, by UnmarshalBinary for state it does
// not recognise.
var ErrState = errors.New("adaptive: unrecognised policy state")

// Policy is the throttling rule of one group: it decides, request by
// request, whether to send now, postpone or reject, and learns from the
// answers. Time is passed in, never read; a Policy is deterministic given
// its inputs and its random source, and is not safe for concurrent use
// ([NewShared] makes one that is).
//
// Requests have a cost, for backends whose quota counts something other
// than requests: tokens (an LLM API's tokens per minute), bytes, items of a
// batch. Costs are in the caller's unit, the same for every request of a
// policy; with every cost 1 they are requests. A cost of 0 is a free
// request: it is decided as any other but charged nothing. A negative cost
// counts as 0. Each policy says what it does with costs: the [Pacer] paces
// cost units, the [SRE] rule counts requests whatever they cost.
//
// Its state can be saved between uses (for example in Beam state between
// firings) with MarshalBinary and restored with UnmarshalBinary. The
// encoding is opaque and versioned: a Policy refuses, with an error
// wrapping [ErrState], state it does not recognise, and the caller then
// starts afresh.
type Policy interface {
	// Decide decides on the request of the given cost attempted at now,
	// with inFlight requests sent and not answered yet.
	Decide(now time.Time, inFlight, cost int) Decision
	// Record learns the answer, observed at now, to a request Decide let
	// through.
	Record(now time.Time, a Answer)
	// Budget returns how much cost the policy would let through from now
	// until until if asked at every chance, as it stands at now: at least
	// 0, in cost units (requests when every request costs 1), or -1 if it
	// sets no bound. It changes nothing. A caller that
	// takes permits from a shared quota ahead of its requests asks for no
	// more than that, so as not to hold permits back from other clients.
	Budget(now, until time.Time) int
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}
