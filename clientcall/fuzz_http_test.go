package clientcall_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

// answer is what fuzzServer is asked to reply, sent as the request body.
type answer struct {
	Status     int
	RetryAfter string
	Prefix     []byte
	Copies     int
	Suffix     []byte
}

// fuzzServer answers each request as its body (an answer) says: the body is
// Prefix, then Copies copies of the request's Authorization and X-Api-Key
// values, then Suffix, as a careless server echoing its request would.
func fuzzServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a answer
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &a); err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		echo := r.Header.Get("Authorization") + " " + r.Header.Get("X-Api-Key") + "\n"
		if a.RetryAfter != "" {
			w.Header().Set("Retry-After", a.RetryAfter)
		}
		w.WriteHeader(a.Status)
		w.Write(a.Prefix)
		w.Write([]byte(strings.Repeat(echo, a.Copies)))
		w.Write(a.Suffix)
	}))
}

// FuzzHTTPAnswer: whatever a server answers (any status from 200 to 599,
// any Retry-After, any body, the request's header values echoed in it), the
// HTTP caller never panics. A 2xx answer returns its body. Any other is a
// *StatusError with the status, classified throttled exactly for 429 and
// for 503 with a usable Retry-After, whose message is one line of valid
// UTF-8 with a bounded body excerpt and no header value in it.
func FuzzHTTPAnswer(f *testing.F) {
	const (
		token  = "fuzz-bearer-token-4c1d8e2f7a"
		apiKey = "fuzz-api-key-9b7a6e5d3c"
		envVar = "CLIENTCALL_FUZZ_API_KEY"
	)
	f.Setenv(envVar, apiKey)
	srv := fuzzServer()
	f.Cleanup(srv.Close)
	h := &clientcall.HTTP{
		URL:       srv.URL + "/api?key=query-secret",
		Headers:   map[string]string{"Authorization": "Bearer " + token},
		HeaderEnv: map[string]string{"X-Api-Key": envVar},
		Timeout:   10 * time.Second,
	}
	if err := h.Setup(f.Context()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Teardown(f.Context()) })

	f.Add(uint16(500), "", []byte("error: "), uint8(1), []byte(" end"))
	f.Add(uint16(429), "2", []byte{}, uint8(0), []byte{})
	f.Add(uint16(429), "Wed, 21 Oct 2015 07:28:00 GMT", []byte("slow down"), uint8(3), []byte("\x00\x1b"))
	f.Add(uint16(503), "120", []byte("maintenance"), uint8(1), []byte{})
	f.Add(uint16(503), "soon", []byte{}, uint8(0), []byte{})
	f.Add(uint16(401), "", []byte("bad token: "), uint8(2), []byte("\xff\xfe"))
	f.Add(uint16(302), "", []byte("moved"), uint8(1), []byte{})
	f.Add(uint16(200), "", []byte(`{"ok":true}`), uint8(0), []byte{})
	f.Add(uint16(204), "", []byte("no body allowed"), uint8(0), []byte{})
	f.Add(uint16(400), "", bytes.Repeat([]byte("é"), 150), uint8(1), bytes.Repeat([]byte("x"), 300))
	f.Add(uint16(500), "", bytes.Repeat([]byte("\n"), 195), uint8(4), []byte{})
	f.Fuzz(func(t *testing.T, status uint16, retryAfter string, prefix []byte, copies uint8, suffix []byte) {
		a := answer{Status: 200 + int(status)%400, RetryAfter: retryAfter, Prefix: prefix, Copies: int(copies % 8), Suffix: suffix}
		if strings.IndexFunc(retryAfter, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) >= 0 || !utf8.ValidString(retryAfter) {
			a.RetryAfter = "" // not a header value a server can send
		}
		req, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.Call(t.Context(), req)
		if a.Status < 300 {
			if err != nil {
				t.Fatalf("status %d: got error %v, want the body", a.Status, err)
			}
			if a.Status != http.StatusNoContent && !bytes.HasPrefix(resp, prefix) {
				t.Errorf("status %d: got body %.40q, want it to start with %.40q", a.Status, resp, prefix)
			}
			return
		}
		se, ok := errors.AsType[*clientcall.StatusError](err)
		if !ok {
			t.Fatalf("status %d: got error %T %v, want *StatusError", a.Status, err, err)
		}
		if se.StatusCode != a.Status {
			t.Errorf("got status %d, want %d", se.StatusCode, a.Status)
		}
		_, usableRA := clientcall.ParseRetryAfter(a.RetryAfter, time.Now())
		wantThrottled := a.Status == http.StatusTooManyRequests || (a.Status == http.StatusServiceUnavailable && usableRA)
		if got := errors.Is(err, clientcall.ErrThrottled); got != wantThrottled {
			t.Errorf("status %d, Retry-After %q: throttled %v, want %v", a.Status, a.RetryAfter, got, wantThrottled)
		}
		msg := err.Error()
		if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r") {
			t.Errorf("message %q: want one line of valid UTF-8", msg)
		}
		if n := len(se.Message); n > 200+len("…") {
			t.Errorf("excerpt is %d bytes, want at most 200 and an ellipsis", n)
		}
		for _, secret := range []string{token, apiKey, "query-secret"} {
			if strings.Contains(msg, secret) {
				t.Errorf("message %q holds the header value %q", msg, secret)
			}
		}
	})
}

// batchFuzzServer answers every batch request with 200, Retry-After 3 and
// the body carried base64-encoded in the first item (a JSON string), with
// each "@@" in it replaced by the request's Authorization value.
func batchFuzzServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var items []json.RawMessage
		var encoded string
		if err := json.NewDecoder(r.Body).Decode(&items); err != nil || len(items) == 0 || json.Unmarshal(items[0], &encoded) != nil {
			http.Error(w, "bad fuzz request", http.StatusTeapot)
			return
		}
		body, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		w.Header().Set("Retry-After", "3")
		w.Write(bytes.ReplaceAll(body, []byte("@@"), []byte(r.Header.Get("Authorization"))))
	}))
}

// FuzzHTTPBatchResponse: whatever a 2xx batch response holds, CallBatch
// never panics and keeps the BatchCaller contract. When the body is a JSON
// array with one entry per item (as json.Unmarshal sees it), each item gets
// its entry unchanged, or, if the entry is an object whose "status" is a
// number of 300 or more, a *StatusError with that status, throttled exactly
// for 429 and 503. Any other body fails the whole call with a *StatusError
// 200 wrapping ErrBatchResponse. No message holds the header value.
func FuzzHTTPBatchResponse(f *testing.F) {
	const token = "fuzz-batch-token-5e2a9c71"
	srv := batchFuzzServer()
	f.Cleanup(srv.Close)
	h := &clientcall.HTTP{
		URL:             srv.URL + "/batch",
		Headers:         map[string]string{"Authorization": token},
		ItemStatusField: "status",
		Timeout:         10 * time.Second,
	}
	if err := h.Setup(f.Context()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Teardown(f.Context()) })

	f.Add([]byte(`[1]`), uint8(0))
	f.Add([]byte(`[{"status":429},{"status":500,"e":"@@"}]`), uint8(1))
	f.Add([]byte(` [ "a" , {"status": 503}, {"status":200} ] `), uint8(2))
	f.Add([]byte(`[{"st\u0061tus":404},{"status":1e999},{"status":"500"},{"status":300,"status":1}]`), uint8(3))
	f.Add([]byte(`{"error":"@@"}`), uint8(0))
	f.Add([]byte(`[1,2,3]`), uint8(1))
	f.Add([]byte(`[1, {"a"`), uint8(1))
	f.Add([]byte(`[1] @@`), uint8(0))
	f.Add([]byte(``), uint8(0))
	f.Add([]byte(`[{"status":-1e999},{"status":299.99999}]`), uint8(1))
	f.Add([]byte("[\"\xff\"]"), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, extra uint8) {
		n := 1 + int(extra%8)
		reqs := make([][]byte, n)
		reqs[0] = []byte(strconv.Quote(base64.StdEncoding.EncodeToString(body)))
		for i := 1; i < n; i++ {
			reqs[i] = []byte("0")
		}
		resps, err := h.CallBatch(t.Context(), reqs)
		var texts []string
		if err != nil {
			texts = append(texts, err.Error())
		}

		served := bytes.ReplaceAll(body, []byte("@@"), []byte(token))
		var want []json.RawMessage
		trimmed := bytes.TrimSpace(served)
		isArray := len(trimmed) > 0 && trimmed[0] == '[' && json.Unmarshal(served, &want) == nil && len(want) == n
		if !isArray {
			se, ok := errors.AsType[*clientcall.StatusError](err)
			if !ok || se.StatusCode != 200 || se.Throttled || !errors.Is(err, clientcall.ErrBatchResponse) || resps != nil {
				t.Fatalf("body %q, %d items: got %q, %T %v; want nil and a whole-call *StatusError 200 with ErrBatchResponse", served, n, resps, err, err)
			}
		} else {
			if len(resps) != n {
				t.Fatalf("body %q: got %d responses, want %d", served, len(resps), n)
			}
			var errs []error
			if err != nil {
				be, ok := errors.AsType[*clientcall.BatchError](err)
				if !ok || len(be.Errs) != n {
					t.Fatalf("body %q: got error %T %v, want nil or a BatchError with %d errors", served, err, err, n)
				}
				errs = be.Errs
			}
			for i, entry := range want {
				code, wantFail := entryStatus(entry)
				var itemErr error
				if errs != nil {
					itemErr = errs[i]
				}
				if !wantFail {
					if itemErr != nil || !bytes.Equal(resps[i], entry) {
						t.Errorf("entry %d %q: got %q, %v; want the entry, nil", i, entry, resps[i], itemErr)
					}
					continue
				}
				se, ok := errors.AsType[*clientcall.StatusError](itemErr)
				if !ok {
					t.Errorf("entry %d %q: got error %T %v, want *StatusError", i, entry, itemErr, itemErr)
					continue
				}
				texts = append(texts, itemErr.Error())
				throttled := code == 429 || code == 503
				if se.StatusCode != code || se.Throttled != throttled || (se.RetryAfter == 3*time.Second) != throttled {
					t.Errorf("entry %d %q: got StatusCode %d, Throttled %v, RetryAfter %v; want %d, %v, 3s if throttled",
						i, entry, se.StatusCode, se.Throttled, se.RetryAfter, code, throttled)
				}
				if len(se.Message) > 200+len("…") {
					t.Errorf("entry %d: excerpt is %d bytes, want at most 200 and an ellipsis", i, len(se.Message))
				}
			}
		}
		for _, msg := range texts {
			if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r") {
				t.Errorf("message %q: want one line of valid UTF-8", msg)
			}
			if strings.Contains(msg, token) {
				t.Errorf("message %q holds the header value", msg)
			}
		}
	})
}

// entryStatus is the fuzz oracle for ItemStatusField "status", written with
// json.Unmarshal: the status of an entry that should fail, and whether it
// should.
func entryStatus(entry json.RawMessage) (int, bool) {
	var m map[string]json.RawMessage
	if len(entry) == 0 || entry[0] != '{' || json.Unmarshal(entry, &m) != nil {
		return 0, false
	}
	v, ok := m["status"]
	if !ok || len(v) == 0 || v[0] == '-' { // negative numbers are below 300
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		// Unmarshal refuses numbers beyond float64; they are large statuses.
		if ute, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok || ute.Value != "number "+string(v) {
			return 0, false
		}
		return math.MaxInt32, true
	}
	if f < 300 {
		return 0, false
	}
	return int(min(f, math.MaxInt32)), true
}
