package clientcall

import (
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Class is the outcome of one call as the throttling algorithm sees it.
type Class int

const (
	// Success is a call that returned no error.
	Success Class = iota
	// Throttled is a call the server refused for quota reasons: HTTP 429,
	// HTTP 503 with Retry-After, gRPC RESOURCE_EXHAUSTED, or any error for
	// which errors.Is(err, ErrThrottled) is true.
	Throttled
	// Failed is every other error, including timeouts, lost connections and
	// cancelled or expired contexts.
	Failed
	// Unreachable is a call that never reached the server: its connection
	// could not be made (refused, no route, no such host). It fails like
	// [Failed], and the throttle also backs off as from a throttling
	// answer, taking it as a sign that the service is down rather than
	// that the element is bad.
	Unreachable
)

// String returns "success", "throttled", "failed" or "unreachable".
func (c Class) String() string {
	switch c {
	case Success:
		return "success"
	case Throttled:
		return "throttled"
	case Failed:
		return "failed"
	case Unreachable:
		return "unreachable"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Classify is the default classification of a call's error:
//   - nil is [Success];
//   - an error for which errors.Is(err, [ErrThrottled]) is true is [Throttled];
//   - a [*StatusError] in the chain with StatusCode 429 or GRPCCode
//     RESOURCE_EXHAUSTED is [Throttled], even without Throttled set;
//   - a gRPC status error (status.FromError, which also looks through
//     wrapping) with code RESOURCE_EXHAUSTED is [Throttled];
//   - a failed dial (*net.OpError with Op "dial", anywhere in the chain)
//     is [Unreachable];
//   - anything else is [Failed].
//
// It never looks at error messages.
func Classify(err error) Class {
	if err == nil {
		return Success
	}
	if errors.Is(err, ErrThrottled) {
		return Throttled
	}
	if se, ok := errors.AsType[*StatusError](err); ok &&
		(se.StatusCode == http.StatusTooManyRequests || se.GRPCCode == codes.ResourceExhausted) {
		return Throttled
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.ResourceExhausted {
		return Throttled
	}
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "dial" {
		return Unreachable
	}
	return Failed
}

// Classifier lets users override [Classify], for example to treat a
// vendor's HTTP 403 as throttling, or a failed dial as a plain failure
// ([Failed] rather than [Unreachable]). Implementations are named struct types
// registered with beam.RegisterType, configured through exported fields, and
// safe for concurrent use.
type Classifier interface {
	Classify(err error) Class
}

// StatusClassifier is a [Classifier] that classifies like [Classify] but
// also treats the listed HTTP statuses and gRPC codes as throttling. Its zero
// value behaves exactly like Classify. It is safe for concurrent use.
type StatusClassifier struct {
	HTTPStatuses []int        // e.g. []int{403} for an API that answers 403 when over quota
	GRPCCodes    []codes.Code // e.g. []codes.Code{codes.Unavailable}
}

// Classify returns [Throttled] when err carries one of c's HTTP statuses
// (through a [*StatusError]) or gRPC codes (through a [*StatusError] or a
// gRPC status), and [Classify]'s answer otherwise.
func (c StatusClassifier) Classify(err error) Class {
	class := Classify(err)
	if class == Success || class == Throttled {
		return class
	}
	if se, ok := errors.AsType[*StatusError](err); ok {
		if (se.StatusCode != 0 && slices.Contains(c.HTTPStatuses, se.StatusCode)) ||
			(se.GRPCCode != codes.OK && slices.Contains(c.GRPCCodes, se.GRPCCode)) {
			return Throttled
		}
	}
	if len(c.GRPCCodes) > 0 {
		if s, ok := status.FromError(err); ok && slices.Contains(c.GRPCCodes, s.Code()) {
			return Throttled
		}
	}
	return class
}

var _ Classifier = StatusClassifier{}
