package clientcall

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// ErrThrottled reports that the server refused a call because of its quota.
// Errors for which errors.Is(err, ErrThrottled) is true are classified as
// [Throttled].
var ErrThrottled = errors.New("clientcall: throttled by server")

// ErrResponseTooLarge is the cause (see [StatusError.Err]) when a response
// body is larger than [HTTP.MaxResponseBytes].
var ErrResponseTooLarge = errors.New("clientcall: response body too large")

// ErrBatchResponse is the cause (see [StatusError.Err]) when a 2xx answer to
// [HTTP.CallBatch] is not a JSON array with one entry per item sent.
var ErrBatchResponse = errors.New("clientcall: malformed batch response")

// StatusError carries what the server said about a failed call, or, when
// StatusCode and GRPCCode are both unset, why no answer came (connection
// errors, timeouts).
//
// It never holds request header values. errors.Is(err, [ErrThrottled])
// reports true when Throttled is set; Unwrap returns Err.
type StatusError struct {
	StatusCode int           // HTTP status; 0 when there was no HTTP response
	GRPCCode   codes.Code    // gRPC status code; codes.OK when not gRPC
	RetryAfter time.Duration // back-off the server asked for; 0 when it gave none
	Throttled  bool          // the server refused the call for quota reasons
	Method     string        // request method, e.g. "POST"; may be empty
	URL        string        // scheme://host/path of the request, without user info or query
	Message    string        // short detail: a bounded, sanitised body excerpt or the cause
	Err        error         // underlying cause, if any
}

// Error returns a one-line description such as
// "clientcall: POST http://127.0.0.1:8500/api: HTTP 500 Internal Server Error: boom"
// or "clientcall: POST http://127.0.0.1:8500/api: timeout after 200ms".
func (e *StatusError) Error() string {
	parts := make([]string, 0, 3)
	if target := strings.TrimSpace(e.Method + " " + e.URL); target != "" {
		parts = append(parts, target)
	}
	var status []string
	if e.StatusCode != 0 {
		s := "HTTP " + strconv.Itoa(e.StatusCode)
		if text := http.StatusText(e.StatusCode); text != "" {
			s += " " + text
		}
		status = append(status, s)
	}
	if e.GRPCCode != codes.OK {
		status = append(status, "gRPC "+e.GRPCCode.String())
	}
	if len(status) == 0 && e.Throttled {
		status = append(status, "throttled")
	}
	if e.RetryAfter > 0 {
		status = append(status, "(retry after "+e.RetryAfter.String()+")")
	}
	if len(status) > 0 {
		parts = append(parts, strings.Join(status, " "))
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg != "" {
		parts = append(parts, msg)
	}
	if len(parts) == 0 {
		parts = append(parts, "call failed")
	}
	return "clientcall: " + strings.Join(parts, ": ")
}

// Is reports whether target is [ErrThrottled] and e is a throttling answer.
func (e *StatusError) Is(target error) bool {
	return target == ErrThrottled && e.Throttled
}

// Unwrap returns the underlying cause.
func (e *StatusError) Unwrap() error { return e.Err }
