package clientcall_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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
