package clientcall_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
	"github.com/google/go-cmp/cmp"
)

func byteSlices(ss ...string) [][]byte {
	if ss == nil {
		return nil
	}
	out := make([][]byte, len(ss))
	for i, s := range ss {
		if s != "<nil>" {
			out[i] = []byte(s)
		}
	}
	return out
}

// itemOutcomes checks the BatchCaller contract for a call that did not fail
// as a whole, and returns each item's response, or "error: " and its error.
func itemOutcomes(t *testing.T, n int, resps [][]byte, err error) []string {
	t.Helper()
	if err != nil {
		be, ok := errors.AsType[*clientcall.BatchError](err)
		if !ok {
			t.Fatalf("got error %T %v, want nil or a *BatchError", err, err)
		}
		if !slicesContainNonNil(be.Errs) {
			t.Errorf("got a BatchError with no failed item, want a nil error")
		}
	}
	if len(resps) != n {
		t.Fatalf("got %d responses for %d requests", len(resps), n)
	}
	resps, errs := clientcall.SplitBatch(n, resps, err)
	got := make([]string, n)
	for i := range got {
		if errs[i] != nil {
			got[i] = "error: " + errs[i].Error()
		} else {
			got[i] = string(resps[i])
		}
	}
	return got
}

func slicesContainNonNil(errs []error) bool {
	for _, err := range errs {
		if err != nil {
			return true
		}
	}
	return false
}

// TestHTTPCallBatch sends batches to the quota server, which echoes the
// request body: the JSON array sent comes back as the response array.
func TestHTTPCallBatch(t *testing.T) {
	tests := []struct {
		name         string
		reqs         [][]byte
		want         []string
		wantRequests int64
	}{
		{
			name:         "all succeed",
			reqs:         byteSlices(`{"text":"a"}`, `[1, 2]`, `"s"`, " 3 \n", `null`),
			want:         []string{`{"text":"a"}`, `[1, 2]`, `"s"`, `3`, `null`},
			wantRequests: 1,
		},
		{
			name: "invalid items fail alone and are not sent",
			reqs: byteSlices(`1`, `not json`, `{}`, "<nil>", `{"a":`, `"ok"`),
			want: []string{`1`, "error: clientcall: batch item 1 is not valid JSON", `{}`,
				"error: clientcall: batch item 3 is not valid JSON", "error: clientcall: batch item 4 is not valid JSON", `"ok"`},
			wantRequests: 1,
		},
		{
			name:         "no valid item, no request",
			reqs:         byteSlices(`x`, ``),
			want:         []string{"error: clientcall: batch item 0 is not valid JSON", "error: clientcall: batch item 1 is not valid JSON"},
			wantRequests: 0,
		},
		{
			name:         "no items, no request",
			reqs:         nil,
			want:         []string{},
			wantRequests: 0,
		},
		{
			name:         "one item",
			reqs:         byteSlices(`{"x":[]}`),
			want:         []string{`{"x":[]}`},
			wantRequests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newQuotaServer(t, testserver.Config{})
			h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint()})
			resps, err := h.CallBatch(t.Context(), tt.reqs)
			got := itemOutcomes(t, len(tt.reqs), resps, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("items mismatch (-want +got):\n%s", diff)
			}
			if st := srv.Handler.Stats(); st.Accepted != tt.wantRequests {
				t.Errorf("server accepted %d requests, want %d", st.Accepted, tt.wantRequests)
			}
		})
	}
}

// TestHTTPCallBatchLazySetup checks that CallBatch sets up like Call, and
// reports a bad configuration as a whole-call error.
func TestHTTPCallBatchLazySetup(t *testing.T) {
	srv, _ := newQuotaServer(t, testserver.Config{})
	h := &clientcall.HTTP{URL: srv.Endpoint()}
	t.Cleanup(func() { h.Teardown(context.Background()) })
	resps, err := h.CallBatch(t.Context(), byteSlices(`1`, `2`))
	if diff := cmp.Diff([]string{"1", "2"}, itemOutcomes(t, 2, resps, err)); diff != "" {
		t.Errorf("items mismatch (-want +got):\n%s", diff)
	}
	_, err = (&clientcall.HTTP{}).CallBatch(t.Context(), byteSlices(`1`))
	if want := "clientcall: HTTP.URL is empty"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

// TestHTTPCallBatchWholeCall checks that an answer to the whole call other
// than a 2xx is the error Call returns, and applies to every item.
func TestHTTPCallBatchWholeCall(t *testing.T) {
	tests := []struct {
		name      string
		cfg       testserver.Config
		set       func(*testserver.Handler)
		maxBytes  int64
		reqs      [][]byte
		wantClass clientcall.Class
		wantCode  int
		wantRetry bool
		wantMsg   string // Error() after "clientcall: POST <url>: "
	}{
		{
			name:      "over quota",
			cfg:       testserver.Config{Quota: 1, Period: time.Minute},
			reqs:      byteSlices(`1`, `2`, `3`),
			wantClass: clientcall.Throttled, wantCode: 429, wantRetry: true,
		},
		{
			name:      "over quota with an invalid item",
			cfg:       testserver.Config{Quota: 1, Period: time.Minute},
			reqs:      byteSlices(`1`, `nope`),
			wantClass: clientcall.Throttled, wantCode: 429, wantRetry: true,
		},
		{
			name:      "outage 503",
			set:       func(h *testserver.Handler) { h.SetOutage(503) },
			reqs:      byteSlices(`1`, `2`),
			wantClass: clientcall.Throttled, wantCode: 503, wantRetry: true,
		},
		{
			name:      "server error",
			set:       func(h *testserver.Handler) { h.SetErrorRate(1) },
			reqs:      byteSlices(`1`, `2`),
			wantClass: clientcall.Failed, wantCode: 500,
			wantMsg: "HTTP 500 Internal Server Error: testserver: injected error",
		},
		{
			name:      "response too large",
			maxBytes:  8,
			reqs:      byteSlices(`"abcd"`, `"efgh"`),
			wantClass: clientcall.Failed, wantCode: 200,
			wantMsg: "HTTP 200 OK: response body larger than MaxResponseBytes (8 bytes)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newQuotaServer(t, tt.cfg)
			if tt.set != nil {
				tt.set(srv.Handler)
			}
			h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint(), MaxResponseBytes: tt.maxBytes})
			if tt.cfg.Quota > 0 { // use up the quota
				if _, err := h.CallBatch(t.Context(), byteSlices(`0`)); err != nil {
					t.Fatalf("first CallBatch: %v", err)
				}
			}
			resps, err := h.CallBatch(t.Context(), tt.reqs)
			if resps != nil {
				t.Errorf("got responses %q, want nil", resps)
			}
			if _, ok := errors.AsType[*clientcall.BatchError](err); ok {
				t.Fatalf("got a BatchError %v, want a whole-call error", err)
			}
			se, ok := errors.AsType[*clientcall.StatusError](err)
			if !ok {
				t.Fatalf("got error %T %v, want *StatusError", err, err)
			}
			if se.StatusCode != tt.wantCode {
				t.Errorf("got StatusCode %d, want %d", se.StatusCode, tt.wantCode)
			}
			if ra, ok := clientcall.RetryAfter(err); ok != tt.wantRetry || (ok && (ra < time.Second || ra > time.Minute)) {
				t.Errorf("RetryAfter(%v) = %v, %v; want within [1s, 1m]: %v", err, ra, ok, tt.wantRetry)
			}
			if tt.wantMsg != "" {
				if want := "clientcall: POST " + srv.Endpoint() + ": " + tt.wantMsg; err.Error() != want {
					t.Errorf("got error %q, want %q", err, want)
				}
			}
			_, errs := clientcall.SplitBatch(len(tt.reqs), resps, err)
			for i, itemErr := range errs {
				if itemErr != err {
					t.Errorf("item %d: got error %v, want the whole call's", i, itemErr)
				}
				if got := clientcall.Classify(itemErr); got != tt.wantClass {
					t.Errorf("item %d: Classify(%v) = %v, want %v", i, itemErr, got, tt.wantClass)
				}
			}
		})
	}
}

// TestHTTPCallBatchCanceled checks that CallBatch returns promptly once its
// context is done or its Timeout passes, with a whole-call error.
func TestHTTPCallBatchCanceled(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  func(context.CancelFunc) // how and when to cancel
		wantErr error
		wantMsg string // Error() after "clientcall: POST <url>: "
	}{
		{"already canceled", time.Minute, func(cancel context.CancelFunc) { cancel() }, context.Canceled, "context canceled"},
		{"canceled in flight", time.Minute, func(cancel context.CancelFunc) { time.AfterFunc(20*time.Millisecond, cancel) }, context.Canceled, "context canceled"},
		{"timeout", 50 * time.Millisecond, func(context.CancelFunc) {}, context.DeadlineExceeded, "timeout after 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newQuotaServer(t, testserver.Config{Latency: time.Hour})
			h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint(), Timeout: tt.timeout})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			tt.cancel(cancel)
			start := time.Now()
			resps, err := h.CallBatch(ctx, byteSlices(`1`, `2`))
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("CallBatch took %v, want it to return promptly", d)
			}
			if resps != nil || !errors.Is(err, tt.wantErr) {
				t.Errorf("CallBatch = %q, %v; want nil, %v", resps, err, tt.wantErr)
			}
			if want := "clientcall: POST " + srv.Endpoint() + ": " + tt.wantMsg; err == nil || err.Error() != want {
				t.Errorf("got error %v, want %q", err, want)
			}
			if got := clientcall.Classify(err); got != clientcall.Failed {
				t.Errorf("Classify(%v) = %v, want failed", err, got)
			}
		})
	}
}

// TestHTTPCallBatchConcurrent runs batches from many goroutines against a
// quota: each batch is one request, so exactly quota batches succeed and
// the others are throttled as a whole.
func TestHTTPCallBatchConcurrent(t *testing.T) {
	const quota, calls, items = 5, 20, 10
	srv, _ := newQuotaServer(t, testserver.Config{Quota: quota, Period: time.Minute})
	h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint(), MaxConnsPerHost: 4})
	var (
		mu     sync.Mutex
		counts = map[clientcall.Class]int{}
		wg     sync.WaitGroup
	)
	for c := range calls {
		wg.Go(func() {
			reqs := make([][]byte, items)
			for i := range reqs {
				reqs[i] = []byte(strconv.Itoa(c*items + i))
			}
			resps, err := h.CallBatch(t.Context(), reqs)
			if err == nil {
				for i := range reqs {
					if string(resps[i]) != string(reqs[i]) {
						t.Errorf("item %d: got %q, want %q", i, resps[i], reqs[i])
					}
				}
			}
			mu.Lock()
			counts[clientcall.Classify(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[clientcall.Success] != quota || counts[clientcall.Throttled] != calls-quota {
		t.Errorf("got %v, want %d success and %d throttled", counts, quota, calls-quota)
	}
}

// The tests below need answers the quota server cannot give (it echoes
// the request): they use small httptest handlers.

func TestHTTPCallBatchContentType(t *testing.T) {
	tests := []struct {
		name string
		h    clientcall.HTTP
		want string
	}{
		{"default", clientcall.HTTP{}, "application/json"},
		{"ContentType is for Call only", clientcall.HTTP{ContentType: "text/plain"}, "application/json"},
		{"Headers", clientcall.HTTP{Headers: map[string]string{"content-type": "application/json; charset=utf-8"}}, "application/json; charset=utf-8"},
		{"HeaderEnv", clientcall.HTTP{HeaderEnv: map[string]string{"Content-Type": "CLIENTCALL_TEST_CT"}}, "application/vnd.api+json"},
	}
	t.Setenv("CLIENTCALL_TEST_CT", "application/vnd.api+json")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				method, contentType string
				body                []byte
			}
			srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.method, got.contentType = r.Method, r.Header.Get("Content-Type")
				got.body, _ = io.ReadAll(r.Body)
				w.Write(got.body)
			}))
			tt.h.URL = srv.URL
			h := newHTTP(t, &tt.h)
			if _, err := h.CallBatch(t.Context(), byteSlices(`{"a":1}`, ` [2] `)); err != nil {
				t.Fatalf("CallBatch: %v", err)
			}
			if got.method != "POST" || got.contentType != tt.want || string(got.body) != `[{"a":1}, [2] ]` {
				t.Errorf("server got method %q, Content-Type %q, body %q; want POST, %q, %q",
					got.method, got.contentType, got.body, tt.want, `[{"a":1}, [2] ]`)
			}
		})
	}
}

// TestHTTPCallBatchResponseShape checks that a 2xx answer that is not a JSON
// array with one entry per item sent fails the whole call.
func TestHTTPCallBatchResponseShape(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantMsg string // Error() after "clientcall: POST <url>: HTTP 200 OK: "
	}{
		{"object", `{"error":"quota"}`, `batch response is not a JSON array: {"error":"quota"}`},
		{"string", `"[1,2]"`, `batch response is not a JSON array: "[1,2]"`},
		{"not JSON", "<html>\nbusy</html>", "batch response is not a JSON array: <html> busy</html>"},
		{"empty", "", "batch response is not a JSON array: empty body"},
		{"whitespace", " \n", "batch response is not a JSON array: empty body"},
		{"too few", `[1]`, "batch response has 1 entries for 2 items sent"},
		{"too many", `[1, 2, {"x": [3]}, 4]`, "batch response has 4 entries for 2 items sent"},
		{"empty array", `[]`, "batch response has 0 entries for 2 items sent"},
		{"truncated", `[1, 2`, "batch response is not a valid JSON array: unexpected EOF"},
		{"truncated entry", `[1, {"a"`, "batch response is not a valid JSON array: unexpected EOF"},
		{"missing comma", `[1 2]`, "batch response is not a valid JSON array: expected comma after array element"},
		{"trailing comma", `[1, 2,]`, "batch response is not a valid JSON array: invalid character ']' looking for beginning of value"},
		{"trailing data", `[1, 2] [3]`, "batch response has more data after the JSON array"},
		{"two arrays glued", `[1, 2][3]`, "batch response has more data after the JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Retry-After", "5") // not throttling on a 2xx answer
				io.WriteString(w, tt.body)
			}))
			h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api", ItemStatusField: "status"})
			resps, err := h.CallBatch(t.Context(), byteSlices(`"a"`, `bad`, `"b"`))
			if resps != nil {
				t.Errorf("got responses %q, want nil", resps)
			}
			se, ok := errors.AsType[*clientcall.StatusError](err)
			if !ok {
				t.Fatalf("got error %T %v, want *StatusError", err, err)
			}
			if se.StatusCode != 200 || se.Throttled || se.RetryAfter != 0 || !errors.Is(err, clientcall.ErrBatchResponse) {
				t.Errorf("got StatusCode %d, Throttled %v, RetryAfter %v, Err %v; want 200, false, 0, ErrBatchResponse",
					se.StatusCode, se.Throttled, se.RetryAfter, se.Err)
			}
			if want := "clientcall: POST " + srv.URL + "/api: HTTP 200 OK: " + tt.wantMsg; err.Error() != want {
				t.Errorf("got error %q, want %q", err, want)
			}
			if got := clientcall.Classify(err); got != clientcall.Failed {
				t.Errorf("Classify(%v) = %v, want failed", err, got)
			}
		})
	}
}

// TestHTTPCallBatchItemStatus checks ItemStatusField: entries that carry a
// status of 300 or more fail their item alone.
func TestHTTPCallBatchItemStatus(t *testing.T) {
	// One entry per item; the handler answers this array whatever is sent.
	entries := []string{
		`{"status":429}`,
		`{"status":500,"error":"x"}`,
		`{"status":200,"text":"A"}`,
		`{"text":"B"}`,
		`"plain"`,
		`{"status":"500"}`,
		`{"status":299.9}`,
		`{"status":503}`,
		`{"status":404.5,"error":"gone"}`,
		`{"data":{"status":500}}`,
		`{"status":500,"status":201}`,
		`{"status":null}`,
		`{"st\u0061tus":400}`,
		`{"status":1e999}`,
		`{"note":"a \"}\" {[","status":502}`,
		`{"list":[{"status":200}],"status":409}`,
		`{ "status" : 418 , "x" : true }`,
		`{"status":-500}`,
		`{"status":3e2}`,
		`{"Status":500}`,
	}
	const sentBody = `{"status":null}` // what is sent does not matter
	type item struct {
		class clientcall.Class
		code  int
		retry time.Duration
		msg   string // the item's Error() after "clientcall: POST <url>: "; "" for success
	}
	ok := item{class: clientcall.Success}
	tests := []struct {
		name       string
		field      string
		retryAfter string
		want       []item
	}{
		{
			name: "status with Retry-After", field: "status", retryAfter: "7",
			want: []item{
				{clientcall.Throttled, 429, 7 * time.Second, `HTTP 429 Too Many Requests (retry after 7s): {"status":429}`},
				{clientcall.Failed, 500, 0, `HTTP 500 Internal Server Error: {"status":500,"error":"x"}`},
				ok, ok, ok, ok, ok,
				{clientcall.Throttled, 503, 7 * time.Second, `HTTP 503 Service Unavailable (retry after 7s): {"status":503}`},
				{clientcall.Failed, 404, 0, `HTTP 404 Not Found: {"status":404.5,"error":"gone"}`},
				ok, ok, ok,
				{clientcall.Failed, 400, 0, `HTTP 400 Bad Request: {"st\u0061tus":400}`},
				{clientcall.Failed, 2147483647, 0, `HTTP 2147483647: {"status":1e999}`},
				{clientcall.Failed, 502, 0, `HTTP 502 Bad Gateway: {"note":"a \"}\" {[","status":502}`},
				{clientcall.Failed, 409, 0, `HTTP 409 Conflict: {"list":[{"status":200}],"status":409}`},
				{clientcall.Failed, 418, 0, `HTTP 418 I'm a teapot: { "status" : 418 , "x" : true }`},
				ok,
				{clientcall.Failed, 300, 0, `HTTP 300 Multiple Choices: {"status":3e2}`},
				ok,
			},
		},
		{
			name: "status without Retry-After", field: "status",
			want: []item{
				{clientcall.Throttled, 429, 0, `HTTP 429 Too Many Requests: {"status":429}`},
				{clientcall.Failed, 500, 0, `HTTP 500 Internal Server Error: {"status":500,"error":"x"}`},
				ok, ok, ok, ok, ok,
				{clientcall.Failed, 503, 0, `HTTP 503 Service Unavailable: {"status":503}`},
				{clientcall.Failed, 404, 0, `HTTP 404 Not Found: {"status":404.5,"error":"gone"}`},
				ok, ok, ok,
				{clientcall.Failed, 400, 0, `HTTP 400 Bad Request: {"st\u0061tus":400}`},
				{clientcall.Failed, 2147483647, 0, `HTTP 2147483647: {"status":1e999}`},
				{clientcall.Failed, 502, 0, `HTTP 502 Bad Gateway: {"note":"a \"}\" {[","status":502}`},
				{clientcall.Failed, 409, 0, `HTTP 409 Conflict: {"list":[{"status":200}],"status":409}`},
				{clientcall.Failed, 418, 0, `HTTP 418 I'm a teapot: { "status" : 418 , "x" : true }`},
				ok,
				{clientcall.Failed, 300, 0, `HTTP 300 Multiple Choices: {"status":3e2}`},
				ok,
			},
		},
		{
			name: "other field", field: "text", retryAfter: "7",
			want: slices.Repeat([]item{ok}, 20),
		},
		{
			name: "no field", retryAfter: "7",
			want: slices.Repeat([]item{ok}, 20),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.want) != len(entries) {
				t.Fatalf("test has %d wants for %d entries", len(tt.want), len(entries))
			}
			srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				io.WriteString(w, "[\n  "+strings.Join(entries, ",\n  ")+"\n]")
			}))
			h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api", ItemStatusField: tt.field})
			reqs := make([][]byte, len(entries))
			for i := range reqs {
				reqs[i] = []byte(sentBody)
			}
			resps, err := h.CallBatch(t.Context(), reqs)
			wantFailed := 0
			for _, w := range tt.want {
				if w.class != clientcall.Success {
					wantFailed++
				}
			}
			if _, isBatch := errors.AsType[*clientcall.BatchError](err); (wantFailed > 0) != isBatch || (err != nil && !isBatch) {
				t.Fatalf("got error %v, want a BatchError: %v", err, wantFailed > 0)
			}
			if wantFailed > 0 && clientcall.Classify(err) != clientcall.Failed {
				t.Errorf("Classify(BatchError) = %v, want failed", clientcall.Classify(err))
			}
			resps, errs := clientcall.SplitBatch(len(reqs), resps, err)
			for i, w := range tt.want {
				itemErr := errs[i]
				if got := clientcall.Classify(itemErr); got != w.class {
					t.Errorf("item %d: Classify(%v) = %v, want %v", i, itemErr, got, w.class)
				}
				if w.class == clientcall.Success {
					if string(resps[i]) != entries[i] {
						t.Errorf("item %d: got response %q, want %q", i, resps[i], entries[i])
					}
					continue
				}
				se, ok := errors.AsType[*clientcall.StatusError](itemErr)
				if !ok {
					t.Errorf("item %d: got error %T %v, want *StatusError", i, itemErr, itemErr)
					continue
				}
				if se.StatusCode != w.code || se.RetryAfter != w.retry || se.Throttled != (w.class == clientcall.Throttled) {
					t.Errorf("item %d: got StatusCode %d, RetryAfter %v, Throttled %v; want %d, %v, %v",
						i, se.StatusCode, se.RetryAfter, se.Throttled, w.code, w.retry, w.class == clientcall.Throttled)
				}
				if ra, ok := clientcall.RetryAfter(itemErr); ra != w.retry || ok != (w.retry > 0) {
					t.Errorf("item %d: RetryAfter = %v, %v; want %v, %v", i, ra, ok, w.retry, w.retry > 0)
				}
				if want := "clientcall: POST " + srv.URL + "/api: " + w.msg; itemErr.Error() != want {
					t.Errorf("item %d: got error %q, want %q", i, itemErr, want)
				}
			}
		})
	}
}

// TestHTTPCallBatchItemStatusExcerpt checks that a failed entry's Message is
// a bounded, single-line excerpt.
func TestHTTPCallBatchItemStatusExcerpt(t *testing.T) {
	long := `{"status":500,"error":"` + strings.Repeat("é", 3000) + `"}`
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "["+long+"]")
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL, ItemStatusField: "status"})
	_, err := h.CallBatch(t.Context(), byteSlices(`1`))
	be, ok := errors.AsType[*clientcall.BatchError](err)
	if !ok {
		t.Fatalf("got error %T %v, want *BatchError", err, err)
	}
	se, ok := errors.AsType[*clientcall.StatusError](be.Errs[0])
	if !ok {
		t.Fatalf("got item error %T %v, want *StatusError", be.Errs[0], be.Errs[0])
	}
	prefix := `{"status":500,"error":"`
	want := prefix + strings.Repeat("é", (200-len(prefix))/2) + "…"
	if se.Message != want {
		t.Errorf("got Message of %d bytes %q, want %d bytes %q", len(se.Message), se.Message, len(want), want)
	}
}

// TestHTTPCallBatchRedaction plants secrets in headers and the URL query,
// makes the server echo them in every kind of answer, and checks that no
// secret reaches an error message, of the whole call or of an item.
func TestHTTPCallBatchRedaction(t *testing.T) {
	const (
		direct  = "planted-direct-secret-1"
		bearer  = "planted-bearer-secret-2"
		fromEnv = "planted-env-secret-3"
		inQuery = "planted-query-secret-4"
		envName = "CLIENTCALL_TEST_BATCH_KEY"
	)
	secrets := []string{direct, bearer, fromEnv, inQuery}
	t.Setenv(envName, fromEnv)

	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		echo := fmt.Sprintf("%v %s %s", r.Header, bearer, r.URL)
		quoted := strconv.Quote(echo)
		switch r.URL.Path {
		case "/500":
			w.WriteHeader(500)
			io.WriteString(w, echo)
		case "/429":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			io.WriteString(w, echo)
		case "/object":
			fmt.Fprintf(w, `{"echo":%s}`, quoted)
		case "/count":
			fmt.Fprintf(w, `[%s]`, quoted)
		case "/items":
			fmt.Fprintf(w, `[{"status":429,"echo":%s},{"status":500,"echo":%s}]`, quoted, quoted)
		}
	}))
	var texts []string
	for _, path := range []string{"/500", "/429", "/object", "/count", "/items"} {
		h := newHTTP(t, &clientcall.HTTP{
			URL:             srv.URL + path + "?key=" + inQuery,
			Headers:         map[string]string{"X-Direct": direct, "Authorization": "Bearer " + bearer},
			HeaderEnv:       map[string]string{"X-Api-Key": envName},
			ItemStatusField: "status",
		})
		resps, err := h.CallBatch(t.Context(), byteSlices(`1`, `2`, `not json`))
		if err == nil {
			t.Fatalf("%s: got nil error, want one", path)
		}
		texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		_, errs := clientcall.SplitBatch(3, resps, err)
		for _, e := range errs {
			texts = append(texts, e.Error(), fmt.Sprintf("%#v", e))
		}
		if be, ok := errors.AsType[*clientcall.BatchError](err); ok {
			for _, e := range be.Errs {
				if se, ok := errors.AsType[*clientcall.StatusError](e); ok {
					texts = append(texts, se.Message)
				}
			}
		}
	}
	for _, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%q leaks planted secret %q", text, s)
			}
		}
	}
}

// BenchmarkHTTPCallBatch measures a batch of 100 small JSON items over a
// reused loopback connection, with and without ItemStatusField.
func BenchmarkHTTPCallBatch(b *testing.B) {
	const items = 100
	reqs := make([][]byte, items)
	for i := range reqs {
		reqs[i] = []byte(`{"status":200,"text":"item ` + strconv.Itoa(i) + ` with a few words of payload"}`)
	}
	srv := newCountingServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // all of it first: a large body cannot be read once the answer has begun
		w.Write(body)
	}))
	for _, field := range []string{"", "status"} {
		b.Run("ItemStatusField="+field, func(b *testing.B) {
			h := &clientcall.HTTP{URL: srv.URL, ItemStatusField: field}
			ctx := context.Background()
			if err := h.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			defer h.Teardown(ctx)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.CallBatch(ctx, reqs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*items), "ns/item")
		})
	}
}
