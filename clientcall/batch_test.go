package clientcall_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestBatchError(t *testing.T) {
	throttled := &clientcall.StatusError{StatusCode: 429, Throttled: true, RetryAfter: 2 * time.Second}
	failed := errors.New("boom")
	tests := []struct {
		name string
		errs []error
		want string
	}{
		{"first of several", []error{nil, nil, nil, nil, throttled, failed, nil, failed},
			"clientcall: 3 of 8 batch items failed; first (item 4): HTTP 429 Too Many Requests (retry after 2s)"},
		{"first item", []error{failed, nil}, "clientcall: 1 of 2 batch items failed; first (item 0): boom"},
		{"none failed", []error{nil, nil}, "clientcall: 0 of 2 batch items failed"},
		{"empty", nil, "clientcall: 0 of 0 batch items failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &clientcall.BatchError{Errs: tt.errs}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBatchErrorClassify checks that an item's throttling does not make the
// whole batch throttled: a BatchError is a plain failure, and only its items
// are classified as throttled.
func TestBatchErrorClassify(t *testing.T) {
	item := &clientcall.StatusError{StatusCode: 429, Throttled: true, RetryAfter: time.Second}
	be := &clientcall.BatchError{Errs: []error{nil, item, clientcall.ErrThrottled}}
	for _, err := range []error{be, fmt.Errorf("wrapped: %w", be)} {
		if got := clientcall.Classify(err); got != clientcall.Failed {
			t.Errorf("Classify(%v) = %v, want failed", err, got)
		}
		if errors.Is(err, clientcall.ErrThrottled) {
			t.Errorf("errors.Is(%v, ErrThrottled) = true, want false", err)
		}
		if ra, ok := clientcall.RetryAfter(err); ok {
			t.Errorf("RetryAfter(%v) = %v, true; want 0, false", err, ra)
		}
		if got, ok := errors.AsType[*clientcall.BatchError](err); !ok || got != be {
			t.Errorf("errors.As(%v, *BatchError) = %v, %v; want the BatchError", err, got, ok)
		}
	}
	if got := (clientcall.StatusClassifier{HTTPStatuses: []int{429}}).Classify(be); got != clientcall.Failed {
		t.Errorf("StatusClassifier.Classify(BatchError) = %v, want failed", got)
	}
	want := []clientcall.Class{clientcall.Success, clientcall.Throttled, clientcall.Throttled}
	for i, err := range be.Errs {
		if got := clientcall.Classify(err); got != want[i] {
			t.Errorf("Classify(Errs[%d]) = %v, want %v", i, got, want[i])
		}
	}
}

func TestSplitBatch(t *testing.T) {
	whole := &clientcall.StatusError{StatusCode: 429, Throttled: true}
	itemErr := errors.New("item 1 failed")
	tests := []struct {
		name      string
		n         int
		resps     []string
		err       error
		wantResps []string
		wantErrs  []string // "" for a nil error
	}{
		{"success", 3, []string{"a", "b", "c"}, nil, []string{"a", "b", "c"}, []string{"", "", ""}},
		{"empty", 0, nil, nil, []string{}, []string{}},
		{"batch error", 3, []string{"a", "", "c"}, &clientcall.BatchError{Errs: []error{nil, itemErr, nil}},
			[]string{"a", "", "c"}, []string{"", "item 1 failed", ""}},
		{"wrapped batch error", 2, []string{"", "b"}, fmt.Errorf("ctx: %w", &clientcall.BatchError{Errs: []error{itemErr, nil}}),
			[]string{"", "b"}, []string{"item 1 failed", ""}},
		{"whole call", 2, nil, whole, []string{"", ""}, []string{whole.Error(), whole.Error()}},
		{"whole call with responses", 2, []string{"x", "y"}, whole, []string{"", ""}, []string{whole.Error(), whole.Error()}},
		{"too few responses", 5, []string{"a", "b", "c"}, nil, make([]string, 5),
			rep("clientcall: CallBatch returned 3 responses for 5 requests", 5)},
		{"too many responses", 1, []string{"a", "b"}, nil, make([]string, 1),
			rep("clientcall: CallBatch returned 2 responses for 1 requests", 1)},
		{"nil responses", 2, nil, nil, make([]string, 2),
			rep("clientcall: CallBatch returned 0 responses for 2 requests", 2)},
		{"batch error too few errors", 3, []string{"a", "b", "c"}, &clientcall.BatchError{Errs: []error{itemErr}}, make([]string, 3),
			rep("clientcall: CallBatch returned a BatchError with 1 errors for 3 requests", 3)},
		{"batch error nil responses", 2, nil, &clientcall.BatchError{Errs: []error{itemErr, nil}}, make([]string, 2),
			rep("clientcall: CallBatch returned 0 responses for 2 requests (with a BatchError)", 2)},
		{"negative n", -1, nil, nil, []string{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resps, errs := clientcall.SplitBatch(tt.n, tt.resps, tt.err)
			if diff := cmp.Diff(tt.wantResps, resps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("responses mismatch (-want +got):\n%s", diff)
			}
			if len(resps) != max(tt.n, 0) || len(errs) != max(tt.n, 0) {
				t.Errorf("got %d responses and %d errors, want %d of each", len(resps), len(errs), tt.n)
			}
			got := make([]string, len(errs))
			for i, err := range errs {
				if err != nil {
					got[i] = err.Error()
				}
			}
			if diff := cmp.Diff(tt.wantErrs, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSplitBatchKeepsItemErrors checks that items keep their errors as
// values, so each is classified on its own.
func TestSplitBatchKeepsItemErrors(t *testing.T) {
	throttled := &clientcall.StatusError{StatusCode: 429, Throttled: true, RetryAfter: time.Second}
	_, errs := clientcall.SplitBatch(2, []int{0, 7}, &clientcall.BatchError{Errs: []error{throttled, nil}})
	if errs[0] != throttled || clientcall.Classify(errs[0]) != clientcall.Throttled {
		t.Errorf("got errs[0] = %v (%v), want the item's throttling error", errs[0], clientcall.Classify(errs[0]))
	}
	_, errs = clientcall.SplitBatch[int](2, nil, throttled)
	for i, err := range errs {
		if err != throttled {
			t.Errorf("errs[%d] = %v, want the whole call's error", i, err)
		}
	}
}

func TestEchoCallBatch(t *testing.T) {
	var c clientcall.BatchCaller[[]byte, []byte] = clientcall.Echo{}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		reqs    [][]byte
		want    [][]byte
		wantErr error
	}{
		{"several", t.Context(), [][]byte{[]byte("a"), nil, []byte("c")}, [][]byte{[]byte("a"), nil, []byte("c")}, nil},
		{"none", t.Context(), nil, nil, nil},
		{"canceled", canceled, [][]byte{[]byte("a")}, nil, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.CallBatch(tt.ctx, tt.reqs)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("CallBatch error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CallBatch mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func rep(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
