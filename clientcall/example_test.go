package clientcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func ExampleHTTP() {
	// A stand-in for the user's API: it echoes the body and the credential
	// it was sent (which the caller redacts), and answers 429 once the quota
	// of two calls is used up.
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls > 2 {
			w.Header().Set("Retry-After", "5")
			http.Error(w, "quota exceeded", http.StatusTooManyRequests)
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s, sent with %s", body, r.Header.Get("Authorization"))
	}))
	defer srv.Close()

	h := &clientcall.HTTP{
		URL:     srv.URL + "/api",
		Headers: map[string]string{"Authorization": "Bearer example-token"},
		Timeout: 5 * time.Second,
		// HeaderEnv: map[string]string{"Authorization": "API_TOKEN"}, // secrets come from the worker's environment
	}
	ctx := context.Background()
	if err := h.Setup(ctx); err != nil { // optional: Call sets up lazily
		fmt.Println(err)
		return
	}
	defer h.Teardown(ctx)

	for _, req := range []string{"a", "b", "c"} {
		resp, err := h.Call(ctx, []byte(req))
		retry, _ := clientcall.RetryAfter(err)
		fmt.Printf("%s: %q %v %v\n", req, resp, clientcall.Classify(err), retry)
	}
	// Output:
	// a: "a, sent with <redacted>" success 0s
	// b: "b, sent with <redacted>" success 0s
	// c: "" throttled 5s
}

func ExampleClassify() {
	for _, err := range []error{
		nil,
		&clientcall.StatusError{StatusCode: 429, Throttled: true, RetryAfter: 2 * time.Second},
		fmt.Errorf("lookup: %w", status.Error(codes.ResourceExhausted, "quota")),
		fmt.Errorf("vendor: %w", clientcall.ErrThrottled),
		&clientcall.StatusError{StatusCode: 500},
		context.DeadlineExceeded,
		errors.New("connection reset"),
	} {
		fmt.Println(clientcall.Classify(err))
	}
	// Output:
	// success
	// throttled
	// throttled
	// throttled
	// failed
	// failed
	// failed
}

func ExampleParseRetryAfter() {
	now := time.Date(2025, 10, 21, 7, 28, 0, 0, time.UTC)
	for _, v := range []string{"120", "Tue, 21 Oct 2025 07:30:00 GMT", "-1", "soon"} {
		d, ok := clientcall.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 2m0s true
	// 0s false
	// 0s false
}

func ExampleStatusClassifier() {
	// A vendor that answers 403 when the quota is used up.
	c := clientcall.StatusClassifier{HTTPStatuses: []int{403}}
	fmt.Println(c.Classify(&clientcall.StatusError{StatusCode: 403}))
	fmt.Println(c.Classify(&clientcall.StatusError{StatusCode: 404}))
	// Output:
	// throttled
	// failed
}

func ExampleSplitBatch() {
	// What a BatchCaller returned for three requests: the second item was
	// throttled, the others succeeded. The batch as a whole is a plain
	// failure; each item is classified on its own.
	resps := []string{"A", "", "C"}
	var err error = &clientcall.BatchError{Errs: []error{
		nil,
		&clientcall.StatusError{StatusCode: 429, Throttled: true, RetryAfter: 3 * time.Second},
		nil,
	}}
	fmt.Println(err)
	fmt.Println("batch:", clientcall.Classify(err))
	resps, errs := clientcall.SplitBatch(3, resps, err)
	for i := range resps {
		retry, _ := clientcall.RetryAfter(errs[i])
		fmt.Printf("%d: %q %v %v\n", i, resps[i], clientcall.Classify(errs[i]), retry)
	}

	// A whole-call error applies to every item.
	_, errs = clientcall.SplitBatch[string](2, nil, &clientcall.StatusError{StatusCode: 429, Throttled: true})
	fmt.Println(clientcall.Classify(errs[0]), clientcall.Classify(errs[1]))

	// So does a breach of the BatchCaller contract.
	_, errs = clientcall.SplitBatch(5, []string{"a", "b", "c"}, nil)
	fmt.Println(errs[4])
	// Output:
	// clientcall: 1 of 3 batch items failed; first (item 1): HTTP 429 Too Many Requests (retry after 3s)
	// batch: failed
	// 0: "A" success 0s
	// 1: "" throttled 3s
	// 2: "C" success 0s
	// throttled throttled
	// clientcall: CallBatch returned 3 responses for 5 requests
}

func ExampleEcho_CallBatch() {
	resps, err := clientcall.Echo{}.CallBatch(context.Background(), [][]byte{[]byte("a"), []byte("b")})
	fmt.Printf("%q %v\n", resps, err)
	// Output:
	// ["a" "b"] <nil>
}

func ExampleHTTP_CallBatch() {
	// A stand-in for a batch API: it takes a JSON array of items and answers
	// an array with one entry per item, each with its own status.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var items []struct{ Text string }
		if err := json.NewDecoder(r.Body).Decode(&items); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := make([]map[string]any, len(items))
		for i, it := range items {
			switch it.Text {
			case "":
				out[i] = map[string]any{"status": 400, "error": "empty text"}
			default:
				out[i] = map[string]any{"status": 200, "text": strings.ToUpper(it.Text)}
			}
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()

	h := &clientcall.HTTP{URL: srv.URL + "/translate", ItemStatusField: "status"}
	ctx := context.Background()
	defer h.Teardown(ctx)

	reqs := [][]byte{
		[]byte(`{"text":"hello"}`),
		[]byte(`{"text":""}`),
		[]byte(`not JSON`), // fails alone, and is not sent
		[]byte(`{"text":"world"}`),
	}
	resps, err := h.CallBatch(ctx, reqs)
	resps, errs := clientcall.SplitBatch(len(reqs), resps, err)
	for i := range reqs {
		if errs[i] != nil {
			var se *clientcall.StatusError
			if errors.As(errs[i], &se) {
				fmt.Printf("%d: %v, HTTP %d: %s\n", i, clientcall.Classify(errs[i]), se.StatusCode, se.Message)
			} else {
				fmt.Printf("%d: %v: %v\n", i, clientcall.Classify(errs[i]), errs[i])
			}
			continue
		}
		fmt.Printf("%d: %s\n", i, resps[i])
	}
	// Output:
	// 0: {"status":200,"text":"HELLO"}
	// 1: failed, HTTP 400: {"error":"empty text","status":400}
	// 2: failed: clientcall: batch item 2 is not valid JSON
	// 3: {"status":200,"text":"WORLD"}
}
