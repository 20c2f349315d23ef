package firing

import (
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Result is the answer to one element of a call.
type Result struct {
	Class      clientcall.Class // as the driver classified it: clientcall.Unreachable fails, and backs off as a throttling answer does
	RetryAfter time.Duration    // a throttling answer's Retry-After, 0 if none
	// Quota holds the limits the call's answer advertised, the same for
	// each element of the call (the policy reads the first element's).
	Quota []adaptive.Quota
}

// Policy decides, call by call, whether to send now: the part of
// adaptive.Policy a firing uses.
type Policy interface {
	Decide(now time.Time, inFlight, cost int) adaptive.Decision
	Record(now time.Time, a adaptive.Answer)
	// Budget returns how many cost units it would send in [now, until],
	// or -1 without a bound.
	Budget(now, until time.Time) int
}

// Progress is the transform's last progress on the worker, for MaxStall.
type Progress interface {
	Last() time.Time         // the zero Time if none
	Progressed(at time.Time) // a call was accepted at at
}

// Env is what a firing decides with.
type Env struct {
	Policy   Policy
	Quota    Quota    // the shared quota; nil for none
	Progress Progress // nil: MaxStall counts from when elements joined the queue
	// Latency is the calls' mean latency as the driver measured it, for
	// Config.SizeCalls; zero if not known yet.
	Latency time.Duration
	// Room bounds the calls Config.SizeCalls sizes, when it is 1 or more:
	// how many the group may have under way by the driver's ceiling on a
	// server that queues (adaptive.Ceiling), its own calls carried into
	// the firing included.
	Room int
}

// Action is what a driver does next.
type Action int

// The actions.
const (
	Done     Action = iota // the firing is over
	Call                   // make the call Next returned
	Route                  // route the element Next returned
	Wait                   // wait until Next's time (zero: for an answer only), or an answer
	Take                   // add up to Next's N more elements, or call Taken if there are none
	AskQuota               // make the round trip to the shared quota's service Next's Permit asks for, then QuotaAnswered
)

// Step is an action with its details, as Next returns it.
type Step struct {
	Action Action
	// Call: the call's number (for Answered), its elements (indices into
	// the firing's elements, in order), its cost and the policy's
	// rejection probability when it decided.
	Call  int
	Elems []int
	Cost  int
	Prob  float64
	// Route: the element and where it goes, and why; with Why Answered,
	// Pos is its place in its call.
	Elem int
	Pos  int
	To   Kind
	Why  Why
	// Route with Why Expired: the bound that ran out, and the time before
	// which the element could not be sent (zero if it simply ran out).
	Bound Bound
	// Until: with Wait, the time to wait until (zero: an answer only);
	// with Route and Why Expired, when it could be sent at the earliest
	// (zero if it simply ran out).
	Until time.Time
	// N: with Take, how many live elements the firing can take at most.
	N int
	// Postponed: with Wait, the policy postponed (not waiting for calls in
	// flight or for a slot of the quota).
	Postponed bool
	// Permit: with AskQuota, the quota's permit that asks for the round
	// trip (its Token is the quota's record of it).
	Permit Permit
}

// Why says why an element is routed.
type Why int

// The reasons for a route.
const (
	Answered    Why = iota // its call's answer (Step.Call, Elem's position in it)
	Rejected               // the policy rejected its call (Step.Prob)
	Expired                // it ran out of waiting (Step.Bound)
	Interrupted            // the pipeline is interrupted
)

// Bound is a bound of an element's wait.
type Bound int

// The bounds.
const (
	NoBound    Bound = iota
	BoundWait        // Config.MaxWait
	BoundStall       // Config.MaxStall
)
