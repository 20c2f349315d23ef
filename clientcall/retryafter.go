package clientcall

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"
)

// RetryAfter returns the back-off the server asked for, found in err's chain:
// the RetryAfter of a [*StatusError] when positive, otherwise the RetryDelay
// of a google.rpc.RetryInfo detail in a gRPC status error. It reports false
// when the server gave none.
func RetryAfter(err error) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	if se, ok := errors.AsType[*StatusError](err); ok && se.RetryAfter > 0 {
		return se.RetryAfter, true
	}
	s, ok := status.FromError(err)
	if !ok {
		return 0, false
	}
	for _, d := range s.Details() {
		ri, ok := d.(*errdetails.RetryInfo)
		if !ok || ri.GetRetryDelay() == nil || ri.GetRetryDelay().CheckValid() != nil {
			continue
		}
		if delay := ri.GetRetryDelay().AsDuration(); delay >= 0 {
			return delay, true
		}
	}
	return 0, false
}

// maxRetryAfterSeconds is the largest delta-seconds value that fits a
// time.Duration.
const maxRetryAfterSeconds = math.MaxInt64 / int64(time.Second)

// ParseRetryAfter parses the value of an HTTP Retry-After header (RFC 9110,
// section 10.2.3): either delta-seconds ("120") or an HTTP-date
// ("Wed, 21 Oct 2015 07:28:00 GMT", also the obsolete RFC 850 and ANSI C
// forms), taken relative to now. A date not after now yields (0, true): the
// server allows an immediate retry. Empty, negative, fractional or otherwise
// malformed values, and delta-seconds too large for a time.Duration, yield
// (0, false). The result is never negative.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > maxRetryAfterSeconds {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
