package clientcall

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// BatchCaller calls the user's API once for several requests.
//
// The outcome of CallBatch(ctx, reqs) is one of three:
//   - err == nil: every item succeeded; len(resps) == len(reqs) and resps[i]
//     answers reqs[i].
//   - err is a [*BatchError] (found with errors.As): some items failed and
//     others succeeded. len(BatchError.Errs) == len(reqs) and
//     len(resps) == len(reqs); resps[i] is valid where Errs[i] == nil. Each
//     non-nil Errs[i] is classified on its own by [Classify] (or the
//     transform's [Classifier]), so an item the server refused for quota
//     reasons carries, for example, a [*StatusError] with Throttled set.
//   - any other error: the whole call failed, and the error applies to every
//     item (a 429 answer to the whole call throttles all of them). resps may
//     be nil.
//
// Return a *BatchError only when at least one item failed. [SplitBatch]
// turns any outcome into one response and one error per item.
//
// As for [Caller], an implementation must be safe for concurrent use by
// multiple goroutines, and CallBatch must return promptly once ctx is done.
type BatchCaller[Req, Resp any] interface {
	CallBatch(ctx context.Context, reqs []Req) ([]Resp, error)
}

// BatchError reports a batch call in which some items failed and others
// succeeded. See [BatchCaller] for the contract.
//
// It has no Unwrap method on purpose: the items' errors describe the items,
// not the call, so [Classify] of a BatchError is [Failed] even when some
// items were throttled. Use [SplitBatch], or range over Errs, to classify
// each item.
type BatchError struct {
	// Errs has one entry per request, in order: nil for an item that succeeded.
	Errs []error
}

// Error returns a one-line summary such as
// "clientcall: 3 of 50 batch items failed; first (item 4): HTTP 429 Too Many Requests".
// Items are numbered from 0, as in Errs.
func (e *BatchError) Error() string {
	failed, first := 0, -1
	for i, err := range e.Errs {
		if err != nil {
			failed++
			if first < 0 {
				first = i
			}
		}
	}
	s := fmt.Sprintf("clientcall: %d of %d batch items failed", failed, len(e.Errs))
	if first < 0 {
		return s
	}
	return fmt.Sprintf("%s; first (item %d): %s", s, first, strings.TrimPrefix(e.Errs[first].Error(), "clientcall: "))
}

// SplitBatch returns, for a batch of n requests whose [BatchCaller.CallBatch]
// returned resps and err, one response and one error per item: resps[i] is
// valid where errs[i] == nil.
//   - err == nil: resps, and n nil errors;
//   - err is a [*BatchError]: resps and its Errs (not a copy);
//   - any other error: that error for every item;
//   - a breach of the BatchCaller contract (len(resps) != n with a nil or
//     BatchError err, or len(Errs) != n): an error for every item saying so,
//     such as "clientcall: CallBatch returned 3 responses for 5 requests".
//
// The returned slices always have length n; in the error cases the
// responses are zero values. SplitBatch never panics; a negative n is taken
// as 0.
func SplitBatch[Resp any](n int, resps []Resp, err error) ([]Resp, []error) {
	n = max(n, 0)
	if err == nil {
		if len(resps) != n {
			return everyItem[Resp](n, fmt.Errorf("clientcall: CallBatch returned %d responses for %d requests", len(resps), n))
		}
		return resps, make([]error, n)
	}
	if be, ok := errors.AsType[*BatchError](err); ok {
		switch {
		case len(be.Errs) != n:
			return everyItem[Resp](n, fmt.Errorf("clientcall: CallBatch returned a BatchError with %d errors for %d requests", len(be.Errs), n))
		case len(resps) != n:
			return everyItem[Resp](n, fmt.Errorf("clientcall: CallBatch returned %d responses for %d requests (with a BatchError)", len(resps), n))
		}
		return resps, be.Errs
	}
	return everyItem[Resp](n, err)
}

// everyItem returns n zero responses and err for each of them.
func everyItem[Resp any](n int, err error) ([]Resp, []error) {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return make([]Resp, n), errs
}
