// Package adaptive implements client-side adaptive throttling: the rules
// that decide, request by request, whether to send a request to a backend
// now, postpone it or reject it locally, and that learn from the backend's
// answers.
//
// Each rule is a [Policy], one type per algorithm:
//
//   - [Pacer] spaces the requests evenly at a rate that follows the
//     backend's answers and postpones the others; it never rejects.
//   - [SRE] rejects requests locally, before sending them, with the
//     probability of the Google SRE book's adaptive throttle (the original
//     tool's rule).
//
// Requests may have a cost, for backends whose quota counts tokens (an
// LLM API's tokens per minute), bytes or items rather than requests: the
// Pacer paces cost units, the SRE rule counts requests whatever they cost.
// With every cost 1 a cost is a request.
//
// [NewShared] lets the groups of a worker use one Policy together.
//
// The package is pure Go and has no dependency on Beam. Time is passed
// into every call and randomness is injected, so the policies are
// deterministic; their state is saved and restored as opaque, versioned
// bytes (MarshalBinary and UnmarshalBinary), so that a tuning change is
// not an API change.
//
// Typical use:
//
//	d := p.Decide(now, inFlight, cost)
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
	// counts as an accept to the SRE rule unless
	// SREConfig.CountFailuresAsRejects is set.
	// Outcome values other than the three constants are treated as Failed.
	Failed
)
