package clientcall_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func grpcRetryErr(t *testing.T, code codes.Code, delay time.Duration) error {
	t.Helper()
	s, err := status.New(code, "quota exceeded").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	if err != nil {
		t.Fatalf("WithDetails: %v", err)
	}
	return s.Err()
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want clientcall.Class
	}{
		{"nil", nil, clientcall.Success},
		{"sentinel", clientcall.ErrThrottled, clientcall.Throttled},
		{"wrapped sentinel", fmt.Errorf("calling vendor: %w", clientcall.ErrThrottled), clientcall.Throttled},
		{"status error throttled", &clientcall.StatusError{StatusCode: 503, Throttled: true}, clientcall.Throttled},
		{"wrapped status error throttled", fmt.Errorf("x: %w", &clientcall.StatusError{StatusCode: 429, Throttled: true}), clientcall.Throttled},
		{"status error 429 without flag", &clientcall.StatusError{StatusCode: 429}, clientcall.Throttled},
		{"status error gRPC code without flag", &clientcall.StatusError{GRPCCode: codes.ResourceExhausted}, clientcall.Throttled},
		{"status error 503", &clientcall.StatusError{StatusCode: 503}, clientcall.Failed},
		{"status error 500", &clientcall.StatusError{StatusCode: 500}, clientcall.Failed},
		{"status error timeout", &clientcall.StatusError{Err: context.DeadlineExceeded}, clientcall.Failed},
		{"gRPC resource exhausted", status.Error(codes.ResourceExhausted, "quota"), clientcall.Throttled},
		{"wrapped gRPC resource exhausted", fmt.Errorf("rpc: %w", status.Error(codes.ResourceExhausted, "quota")), clientcall.Throttled},
		{"doubly wrapped gRPC with details", fmt.Errorf("a: %w", fmt.Errorf("b: %w", grpcRetryErr(t, codes.ResourceExhausted, time.Second))), clientcall.Throttled},
		{"status error wrapping gRPC", &clientcall.StatusError{Err: status.Error(codes.ResourceExhausted, "quota")}, clientcall.Throttled},
		{"gRPC unavailable", status.Error(codes.Unavailable, "down"), clientcall.Failed},
		{"gRPC deadline", status.Error(codes.DeadlineExceeded, "slow"), clientcall.Failed},
		{"context deadline", context.DeadlineExceeded, clientcall.Failed},
		{"context canceled", context.Canceled, clientcall.Failed},
		{"plain", errors.New("boom"), clientcall.Failed},
		{"message says throttled", errors.New("clientcall: throttled by server"), clientcall.Failed},
		{"joined", errors.Join(io.EOF, clientcall.ErrThrottled), clientcall.Throttled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clientcall.Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestClassString(t *testing.T) {
	tests := []struct {
		c    clientcall.Class
		want string
	}{
		{clientcall.Success, "success"},
		{clientcall.Throttled, "throttled"},
		{clientcall.Failed, "failed"},
		{clientcall.Unreachable, "unreachable"},
		{clientcall.Class(7), "Class(7)"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("Class(%d).String() = %q, want %q", int(tt.c), got, tt.want)
		}
	}
}

// vendor403 is a user Classifier: the vendor answers 403 when over quota.
type vendor403 struct{}

func (vendor403) Classify(err error) clientcall.Class {
	if se, ok := errors.AsType[*clientcall.StatusError](err); ok && se.StatusCode == 403 {
		return clientcall.Throttled
	}
	return clientcall.Classify(err)
}

func TestClassifier(t *testing.T) {
	tests := []struct {
		name string
		c    clientcall.Classifier
		err  error
		want clientcall.Class
	}{
		{"user 403", vendor403{}, &clientcall.StatusError{StatusCode: 403}, clientcall.Throttled},
		{"user 404", vendor403{}, &clientcall.StatusError{StatusCode: 404}, clientcall.Failed},
		{"user nil", vendor403{}, nil, clientcall.Success},
		{"user falls back", vendor403{}, status.Error(codes.ResourceExhausted, "q"), clientcall.Throttled},
		{"status zero value 403", clientcall.StatusClassifier{}, &clientcall.StatusError{StatusCode: 403}, clientcall.Failed},
		{"status zero value 429", clientcall.StatusClassifier{}, &clientcall.StatusError{StatusCode: 429}, clientcall.Throttled},
		{"status 403", clientcall.StatusClassifier{HTTPStatuses: []int{403}}, fmt.Errorf("w: %w", &clientcall.StatusError{StatusCode: 403}), clientcall.Throttled},
		{"status 401 not listed", clientcall.StatusClassifier{HTTPStatuses: []int{403}}, &clientcall.StatusError{StatusCode: 401}, clientcall.Failed},
		{"status no HTTP status", clientcall.StatusClassifier{HTTPStatuses: []int{0}}, &clientcall.StatusError{Err: io.EOF}, clientcall.Failed},
		{"status gRPC code", clientcall.StatusClassifier{GRPCCodes: []codes.Code{codes.Unavailable}}, status.Error(codes.Unavailable, "busy"), clientcall.Throttled},
		{"status gRPC code in StatusError", clientcall.StatusClassifier{GRPCCodes: []codes.Code{codes.Unavailable}}, &clientcall.StatusError{GRPCCode: codes.Unavailable}, clientcall.Throttled},
		{"status gRPC other code", clientcall.StatusClassifier{GRPCCodes: []codes.Code{codes.Unavailable}}, status.Error(codes.Internal, "bug"), clientcall.Failed},
		{"status gRPC OK never throttles", clientcall.StatusClassifier{GRPCCodes: []codes.Code{codes.OK}}, errors.New("plain"), clientcall.Failed},
		{"status nil", clientcall.StatusClassifier{HTTPStatuses: []int{403}}, nil, clientcall.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		want   time.Duration
		wantOK bool
	}{
		{"nil", nil, 0, false},
		{"plain", errors.New("x"), 0, false},
		{"status error", &clientcall.StatusError{StatusCode: 429, RetryAfter: 3 * time.Second}, 3 * time.Second, true},
		{"wrapped status error", fmt.Errorf("w: %w", &clientcall.StatusError{StatusCode: 429, RetryAfter: time.Minute}), time.Minute, true},
		{"status error without", &clientcall.StatusError{StatusCode: 429}, 0, false},
		{"gRPC RetryInfo", grpcRetryErr(t, codes.ResourceExhausted, 1500*time.Millisecond), 1500 * time.Millisecond, true},
		{"wrapped gRPC RetryInfo", fmt.Errorf("w: %w", grpcRetryErr(t, codes.ResourceExhausted, 2*time.Second)), 2 * time.Second, true},
		{"gRPC RetryInfo zero", grpcRetryErr(t, codes.ResourceExhausted, 0), 0, true},
		{"gRPC RetryInfo negative", grpcRetryErr(t, codes.ResourceExhausted, -time.Second), 0, false},
		{"gRPC without details", status.Error(codes.ResourceExhausted, "q"), 0, false},
		{"status error without, wrapping gRPC", &clientcall.StatusError{Err: grpcRetryErr(t, codes.ResourceExhausted, 4*time.Second)}, 4 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := clientcall.RetryAfter(tt.err)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("RetryAfter(%v) = %v, %v; want %v, %v", tt.err, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestStatusError(t *testing.T) {
	tests := []struct {
		name          string
		err           *clientcall.StatusError
		want          string
		wantThrottled bool
	}{
		{
			name: "HTTP 500",
			err:  &clientcall.StatusError{StatusCode: 500, Method: "POST", URL: "http://h/api", Message: "boom"},
			want: "clientcall: POST http://h/api: HTTP 500 Internal Server Error: boom",
		},
		{
			name:          "HTTP 429 with retry",
			err:           &clientcall.StatusError{StatusCode: 429, Throttled: true, RetryAfter: 2 * time.Second, Method: "POST", URL: "http://h/api"},
			want:          "clientcall: POST http://h/api: HTTP 429 Too Many Requests (retry after 2s)",
			wantThrottled: true,
		},
		{
			name: "unknown status",
			err:  &clientcall.StatusError{StatusCode: 599, Method: "GET", URL: "http://h/"},
			want: "clientcall: GET http://h/: HTTP 599",
		},
		{
			name:          "gRPC",
			err:           &clientcall.StatusError{GRPCCode: codes.ResourceExhausted, Throttled: true, Message: "quota"},
			want:          "clientcall: gRPC ResourceExhausted: quota",
			wantThrottled: true,
		},
		{
			name: "cause only",
			err:  &clientcall.StatusError{Method: "POST", URL: "http://h/api", Err: io.EOF},
			want: "clientcall: POST http://h/api: EOF",
		},
		{
			name:          "throttled only",
			err:           &clientcall.StatusError{Throttled: true},
			want:          "clientcall: throttled",
			wantThrottled: true,
		},
		{
			name: "empty",
			err:  &clientcall.StatusError{},
			want: "clientcall: call failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if got := errors.Is(tt.err, clientcall.ErrThrottled); got != tt.wantThrottled {
				t.Errorf("errors.Is(err, ErrThrottled) = %v, want %v", got, tt.wantThrottled)
			}
			if got := errors.Unwrap(tt.err); got != tt.err.Err {
				t.Errorf("Unwrap() = %v, want %v", got, tt.err.Err)
			}
		})
	}
}

// TestUnreachable: the HTTP caller's error for a port where nothing
// listens is Unreachable, for Classify and for a StatusClassifier; an
// answer, a timeout or a closed connection is not.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + ln.Addr().String() + "/api"
	ln.Close()
	_, refused := (&clientcall.HTTP{URL: closedURL}).Call(context.Background(), []byte("x"))
	tests := []struct {
		name string
		err  error
		want clientcall.Class
	}{
		{"refused connection", refused, clientcall.Unreachable},
		{"wrapped", fmt.Errorf("calling: %w", refused), clientcall.Unreachable},
		{"nil", nil, clientcall.Success},
		{"HTTP 503", &clientcall.StatusError{StatusCode: 503}, clientcall.Failed},
		{"timeout", &clientcall.StatusError{Err: context.DeadlineExceeded}, clientcall.Failed},
		{"closed mid-answer", &clientcall.StatusError{Err: &net.OpError{Op: "read", Net: "tcp", Err: io.EOF}}, clientcall.Failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clientcall.Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
			if got := (clientcall.StatusClassifier{HTTPStatuses: []int{403}}).Classify(tc.err); got != tc.want {
				t.Errorf("StatusClassifier.Classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
