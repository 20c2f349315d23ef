// Package clientcall defines how the beamthrottle transform calls a user's
// quota-limited API, and how it reads the outcome of each call.
//
// A [Caller] performs one request. The transform classifies the error it
// returns with [Classify] (or a user [Classifier]) into [Success],
// [Throttled] or [Failed]: only throttling feeds the adaptive rejection
// probability, everything else is a plain failure of that element. When the
// server says how long to back off, [RetryAfter] finds it in the error.
// Most APIs also advertise their quota on every answer (how much is left,
// and when it comes back): [ParseAdvertised] reads the header families in
// use into one [Advertised] per limit, and [HTTP] reports them with
// [ReportAdvertised] to the transform that made the call (a custom caller
// can report its own).
//
// A [BatchCaller] performs one request for several elements, for APIs that
// take many items per call. It succeeds for every item, fails as a whole (one
// error for every item), or returns a [*BatchError] holding each item's own
// error, classified like a single call's; [SplitBatch] turns any of these
// into one response and one error per item.
//
// Beam serialises DoFns as JSON of their exported fields, so callers are
// named struct types configured through exported fields and registered with
// beam.RegisterType (package transforms/throttle registers this package's
// types, so that this package does not import Beam); runtime handles (HTTP clients, connections) live in
// unexported fields built by [Setupper.Setup] and released by
// [Teardowner.Teardown]. [HTTP] is a ready caller for HTTP APIs and [Echo] a
// no-op caller for benchmarks and examples; both also implement
// [BatchCaller], HTTP by sending the items as one JSON array.
package clientcall

import "context"

// Caller calls the user's API for one request and returns its response.
//
// The transform may run several calls in flight on one worker, so an
// implementation must be safe for concurrent use by multiple goroutines.
// Call must return promptly once ctx is done. Errors are interpreted by
// [Classify] (or the transform's [Classifier]): return an error for which
// errors.Is(err, [ErrThrottled]) is true, such as a [*StatusError] with
// Throttled set, when the server refused the call for quota reasons.
type Caller[Req, Resp any] interface {
	Call(ctx context.Context, req Req) (Resp, error)
}

// Setupper is implemented by callers that need runtime resources. The
// transform calls Setup once per worker instance, before the first Call
// (from its DoFn's Setup). A returned error fails the worker's bundle.
type Setupper interface {
	Setup(ctx context.Context) error
}

// Teardowner is implemented by callers that hold runtime resources. The
// transform calls Teardown once per worker instance, after the last Call
// (from its DoFn's Teardown). It is best effort: runners may skip it.
type Teardowner interface {
	Teardown(ctx context.Context) error
}

// Echo is a no-op [Caller] and [BatchCaller] that returns the request as the
// response. It is meant for benchmarks and examples. Its zero value is ready to use and it is
// safe for concurrent use.
type Echo struct{}

// Call returns req unchanged, or ctx's error if ctx is already done.
func (Echo) Call(ctx context.Context, req []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return req, nil
}

// CallBatch returns reqs unchanged, or ctx's error if ctx is already done.
func (Echo) CallBatch(ctx context.Context, reqs [][]byte) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return reqs, nil
}

var (
	_ Caller[[]byte, []byte]      = Echo{}
	_ BatchCaller[[]byte, []byte] = Echo{}
)
