// Package adaptive implements client-side adaptive throttling: the rules
// that decide, request by request, whether to send a request to a backend
// now, postpone it or reject it locally, and that learn from the
// backend's answers.
//
// Each rule is a [Policy], and a [Mode] selects one:
//
//   - [Pacer] ([ModePaced], the default of transforms/throttle) spaces the
//     requests evenly at a rate that follows the backend's answers and
//     postpones the others; it never rejects. Under sustained overload
//     next to nothing is rejected by the backend (see docs/sim/results.md
//     for measurements).
//   - [SRE] ([ModeSRE], the original tool's throttle) rejects requests
//     locally, before sending them, as the Google SRE book describes.
//
// The SRE book, chapter "Handling Overload", has a client count the
// requests it attempts and the requests its backend accepts, and reject
// new requests with probability
//
//	p = max(0, (requests − K·accepts) / (requests + 1))
//
// so that an overloaded backend sees only about K times the traffic it is
// able to accept (with K = 2, about half of the requests sent are rejected
// by the backend). requests counts every attempt, including the ones
// rejected locally, and p is computed from the counts before the current
// attempt is counted. [Throttler] is that rule on its own, allocation free
// on the decision path.
//
// Requests may have a cost, for backends whose quota counts tokens (an LLM
// API's tokens per minute), bytes or items rather than requests: a
// [Coster] decides on a request of a given cost with DecideCost, and the
// function [DecideCost] asks any Policy so, falling back to Decide for one
// that is not a Coster. The [Pacer] paces cost units: its rate is in cost
// units per second, and a request of cost 100 takes a hundred times the
// slot of a request of cost 1. The [SRE] rule counts requests, whatever
// they cost. Decide is a request of cost 1, and with every cost 1
// everything is as it was without costs; a cost of 0 is a free request,
// and a negative one counts as 0. [Budgeter.Budget] is in cost units too.
//
// [Shared] lets the groups of a worker use one Policy together, and
// [Limiter] wraps one with a mutex and the wall clock for ordinary
// concurrent Go code.
//
// The package is pure Go and has no dependency on Beam. Time is passed
// into every call and randomness is injected, so the policies are
// deterministic; their state is saved and restored as opaque, versioned
// bytes (MarshalBinary and UnmarshalBinary), so that a tuning change is
// not an API change.
//
// Typical use (for a request with a cost, d := adaptive.DecideCost(p, now,
// inFlight, cost)):
//
//	d := p.Decide(now, inFlight)
//	switch d.Verdict {
//	case adaptive.Send:
//		err := call()
//		p.Record(time.Now(), adaptive.Answer{Outcome: classify(err), Sent: now})
//	case adaptive.Postpone:
//		// keep the request; ask again at d.RetryAt
//	case adaptive.Reject:
//		// fail fast, without calling the backend
//	}
package adaptive

import "fmt"

// Outcome is what became of a request a policy let through.
type Outcome int

const (
	// Accepted means the backend accepted and served the request.
	Accepted Outcome = iota
	// Throttled means the backend rejected the request because it is
	// overloaded (HTTP 429, gRPC RESOURCE_EXHAUSTED and the like).
	Throttled
	// Failed means the request failed for a reason other than overload
	// (HTTP 400, a timeout the caller does not attribute to load, ...). It
	// counts as an accept unless Config.CountFailuresAsRejects is set.
	// Outcome values other than the three constants are treated as Failed.
	Failed
)

// String returns the name of the outcome.
func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "Accepted"
	case Throttled:
		return "Throttled"
	case Failed:
		return "Failed"
	default:
		return fmt.Sprintf("Outcome(%d)", int(o))
	}
}
