package clientcall_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

// countingServer is an httptest server that counts the connections it accepts.
type countingServer struct {
	*httptest.Server
	conns atomic.Int64
}

func newCountingServer(t testing.TB, h http.Handler) *countingServer {
	t.Helper()
	s := &countingServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// hang blocks a handler until the client goes away or the test ends.
func hang(t *testing.T, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-t.Context().Done():
	}
}

func newHTTP(t *testing.T, h *clientcall.HTTP) *clientcall.HTTP {
	t.Helper()
	if err := h.Setup(t.Context()); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	t.Cleanup(func() { h.Teardown(context.Background()) })
	return h
}

func TestHTTPSuccess(t *testing.T) {
	var got struct {
		method, contentType, custom string
		body                        []byte
	}
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.contentType, got.custom = r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Custom")
		got.body, _ = io.ReadAll(r.Body)
		w.Write([]byte("resp:" + string(got.body)))
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api", Headers: map[string]string{"X-Custom": "v1"}})

	resp, err := h.Call(t.Context(), []byte("hello"))
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if string(resp) != "resp:hello" {
		t.Errorf("got response %q, want %q", resp, "resp:hello")
	}
	if got.method != "POST" || got.contentType != "application/octet-stream" || got.custom != "v1" || string(got.body) != "hello" {
		t.Errorf("server got method %q, Content-Type %q, X-Custom %q, body %q; want POST, application/octet-stream, v1, hello",
			got.method, got.contentType, got.custom, got.body)
	}

	h2 := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api", Method: "PUT", ContentType: "application/json"})
	if _, err := h2.Call(t.Context(), []byte(`{}`)); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if got.method != "PUT" || got.contentType != "application/json" {
		t.Errorf("server got method %q, Content-Type %q; want PUT, application/json", got.method, got.contentType)
	}
}

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		body       string
		wantClass  clientcall.Class
		wantRetry  time.Duration
		wantMsg    string // Error() after "clientcall: POST <url>: "
	}{
		{"429 seconds", 429, "7", "slow down", clientcall.Throttled, 7 * time.Second, "HTTP 429 Too Many Requests (retry after 7s): slow down"},
		{"429 without Retry-After", 429, "", "", clientcall.Throttled, 0, "HTTP 429 Too Many Requests"},
		{"429 garbage Retry-After", 429, "later", "", clientcall.Throttled, 0, "HTTP 429 Too Many Requests"},
		{"503 with Retry-After", 503, "2", "maintenance", clientcall.Throttled, 2 * time.Second, "HTTP 503 Service Unavailable (retry after 2s): maintenance"},
		{"503 with Retry-After 0", 503, "0", "", clientcall.Throttled, 0, "HTTP 503 Service Unavailable"},
		{"503 without Retry-After", 503, "", "down", clientcall.Failed, 0, "HTTP 503 Service Unavailable: down"},
		{"503 garbage Retry-After", 503, "-1", "", clientcall.Failed, 0, "HTTP 503 Service Unavailable"},
		{"500", 500, "", "internal\nerror\t!", clientcall.Failed, 0, "HTTP 500 Internal Server Error: internal error !"},
		{"500 with Retry-After is not throttling", 500, "3", "", clientcall.Failed, 0, "HTTP 500 Internal Server Error"},
		{"400", 400, "", "bad input", clientcall.Failed, 0, "HTTP 400 Bad Request: bad input"},
		{"302 not followed", 302, "", "", clientcall.Failed, 0, "HTTP 302 Found"},
		{"invalid UTF-8 body", 500, "", "a\xffb", clientcall.Failed, 0, "HTTP 500 Internal Server Error: a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var redirected atomic.Bool
			srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					redirected.Store(true)
					return
				}
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				if tt.status/100 == 3 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api"})

			resp, err := h.Call(t.Context(), []byte("x"))
			if resp != nil {
				t.Errorf("got response %q, want nil", resp)
			}
			if got := clientcall.Classify(err); got != tt.wantClass {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tt.wantClass)
			}
			se, ok := errors.AsType[*clientcall.StatusError](err)
			if !ok {
				t.Fatalf("got error %T %v, want *StatusError", err, err)
			}
			if se.StatusCode != tt.status || se.RetryAfter != tt.wantRetry {
				t.Errorf("got StatusCode %d, RetryAfter %v; want %d, %v", se.StatusCode, se.RetryAfter, tt.status, tt.wantRetry)
			}
			if ra, ok := clientcall.RetryAfter(err); ra != tt.wantRetry || ok != (tt.wantRetry > 0) {
				t.Errorf("RetryAfter(err) = %v, %v; want %v, %v", ra, ok, tt.wantRetry, tt.wantRetry > 0)
			}
			if want := "clientcall: POST " + srv.URL + "/api: " + tt.wantMsg; err.Error() != want {
				t.Errorf("got error %q, want %q", err, want)
			}
			if redirected.Load() {
				t.Errorf("redirect was followed, want not followed")
			}
		})
	}
}

func TestHTTPRetryAfterDate(t *testing.T) {
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL})
	_, err := h.Call(t.Context(), nil)
	if got := clientcall.Classify(err); got != clientcall.Throttled {
		t.Errorf("Classify(%v) = %v, want throttled", err, got)
	}
	// The date has whole-second precision and the clock moves on: allow slack.
	if ra, ok := clientcall.RetryAfter(err); !ok || ra < time.Hour-time.Minute || ra > time.Hour {
		t.Errorf("RetryAfter(err) = %v, %v; want about 1h, true", ra, ok)
	}
}

func TestHTTPExcerptBounded(t *testing.T) {
	long := strings.Repeat("é", 5000) // 10000 bytes, 2-byte runes
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, long)
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL})
	_, err := h.Call(t.Context(), nil)
	se, ok := errors.AsType[*clientcall.StatusError](err)
	if !ok {
		t.Fatalf("got error %T %v, want *StatusError", err, err)
	}
	want := strings.Repeat("é", 100) + "…"
	if se.Message != want {
		t.Errorf("got Message of %d bytes %q, want %d bytes %q", len(se.Message), se.Message, len(want), want)
	}
}

func TestHTTPTimeout(t *testing.T) {
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
		hang(t, r)
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api", Timeout: 50 * time.Millisecond})

	_, err := h.Call(t.Context(), []byte("x"))
	if want := "clientcall: POST " + srv.URL + "/api: timeout after 50ms"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
	if got := clientcall.Classify(err); got != clientcall.Failed {
		t.Errorf("Classify(%v) = %v, want failed", err, got)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false, want true", err)
	}
}

func TestHTTPTimeoutReadingBody(t *testing.T) {
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		hang(t, r)
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL, Timeout: 50 * time.Millisecond})
	_, err := h.Call(t.Context(), nil)
	if want := "clientcall: POST " + srv.URL + ": HTTP 200 OK: reading response body: timeout after 50ms"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
	if got := clientcall.Classify(err); got != clientcall.Failed {
		t.Errorf("Classify(%v) = %v, want failed", err, got)
	}
}

func TestHTTPCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel()
		hang(t, r)
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL})
	_, err := h.Call(ctx, nil)
	if want := "clientcall: POST " + srv.URL + ": context canceled"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(%v, context.Canceled) = false, want true", err)
	}
	if got := clientcall.Classify(err); got != clientcall.Failed {
		t.Errorf("Classify(%v) = %v, want failed", err, got)
	}
}

func TestHTTPConnectionClosed(t *testing.T) {
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		conn.Close()
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api"})
	_, err := h.Call(t.Context(), []byte("x"))
	se, ok := errors.AsType[*clientcall.StatusError](err)
	if !ok {
		t.Fatalf("got error %T %v, want *StatusError", err, err)
	}
	if se.StatusCode != 0 || se.Err == nil {
		t.Errorf("got StatusCode %d, Err %v; want 0, non-nil", se.StatusCode, se.Err)
	}
	if want := "clientcall: POST " + srv.URL + "/api: connection closed by server: EOF"; err.Error() != want {
		t.Errorf("got error %q, want %q", err, want)
	}
	if got := clientcall.Classify(err); got != clientcall.Failed {
		t.Errorf("Classify(%v) = %v, want failed", err, got)
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/api"
	ln.Close()

	h := newHTTP(t, &clientcall.HTTP{URL: url})
	_, err = h.Call(t.Context(), []byte("x"))
	if err == nil {
		t.Fatal("got nil error, want connection refused")
	}
	if want := "clientcall: POST " + url + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("got error %q, want prefix %q and \"connection refused\"", err, want)
	}
	if got := clientcall.Classify(err); got != clientcall.Unreachable {
		t.Errorf("Classify(%v) = %v, want unreachable", err, got)
	}
}

func TestHTTPMaxResponseBytes(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		chunked bool
		wantErr bool
	}{
		{"at limit", 1024, false, false},
		{"at limit chunked", 1024, true, false},
		{"over limit", 1025, false, true},
		{"over limit chunked", 1025, true, true},
		{"far over limit", 1 << 20, false, true},
		{"far over limit chunked", 1 << 20, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.chunked {
					w.(http.Flusher).Flush() // headers out before the body: no Content-Length
				} else {
					w.Header().Set("Content-Length", strconv.Itoa(tt.size))
				}
				w.Write(make([]byte, tt.size))
			}))
			h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api", MaxResponseBytes: 1024})
			resp, err := h.Call(t.Context(), nil)
			if !tt.wantErr {
				if err != nil || len(resp) != tt.size {
					t.Errorf("got %d bytes, %v; want %d bytes, nil", len(resp), err, tt.size)
				}
				return
			}
			if !errors.Is(err, clientcall.ErrResponseTooLarge) {
				t.Errorf("errors.Is(%v, ErrResponseTooLarge) = false, want true", err)
			}
			if want := "clientcall: POST " + srv.URL + "/api: HTTP 200 OK: response body larger than MaxResponseBytes (1024 bytes)"; err == nil || err.Error() != want {
				t.Errorf("got error %v, want %q", err, want)
			}
			if got := clientcall.Classify(err); got != clientcall.Failed {
				t.Errorf("Classify(%v) = %v, want failed", err, got)
			}
		})
	}
}

func TestHTTPDefaultMaxResponseBytes(t *testing.T) {
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write(make([]byte, n))
	}))
	for _, n := range []int{clientcall.DefaultMaxResponseBytes, clientcall.DefaultMaxResponseBytes + 1} {
		h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/?n=" + strconv.Itoa(n)})
		_, err := h.Call(t.Context(), nil)
		if got, want := errors.Is(err, clientcall.ErrResponseTooLarge), n > clientcall.DefaultMaxResponseBytes; got != want {
			t.Errorf("%d bytes: got error %v, want too large %v", n, err, want)
		}
	}
}

func TestHTTPConnectionReuse(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   int
	}{
		{"200", 200, 100},
		{"200 empty", 200, 0},
		{"429", 429, 20},
		{"503", 503, 0},
		{"500 with long body", 500, 32 << 10},
		{"400", 400, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(tt.status)
				w.Write(make([]byte, tt.body))
			}))
			h := newHTTP(t, &clientcall.HTTP{URL: srv.URL + "/api"})
			const calls = 20
			for i := range calls {
				_, err := h.Call(t.Context(), []byte("request "+strconv.Itoa(i)))
				if (err == nil) != (tt.status == 200) {
					t.Fatalf("call %d: got error %v, want error %v", i, err, tt.status != 200)
				}
			}
			if got := srv.conns.Load(); got != 1 {
				t.Errorf("%d sequential calls opened %d connections, want 1", calls, got)
			}
		})
	}
}

func TestHTTPMaxConnsPerHost(t *testing.T) {
	const limit, calls = 2, 12
	var (
		mu        sync.Mutex
		active    int
		maxActive int
		full      = make(chan struct{})
		fullOnce  sync.Once
	)
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		active++
		maxActive = max(maxActive, active)
		if active == limit {
			fullOnce.Do(func() { close(full) })
		}
		mu.Unlock()
		// Hold the first requests until the limit is reached, so the test
		// shows that limit calls did run at once.
		select {
		case <-full:
		case <-r.Context().Done():
		}
		mu.Lock()
		active--
		mu.Unlock()
	}))
	h := newHTTP(t, &clientcall.HTTP{URL: srv.URL, MaxConnsPerHost: limit, Timeout: 10 * time.Second})

	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if _, err := h.Call(t.Context(), nil); err != nil {
				t.Errorf("Call: %v", err)
			}
		})
	}
	wg.Wait()
	if got := srv.conns.Load(); got != limit {
		t.Errorf("%d concurrent calls opened %d connections, want %d", calls, got, limit)
	}
	if maxActive != limit {
		t.Errorf("got %d requests in flight at most, want %d", maxActive, limit)
	}
}

func TestHTTPLazySetup(t *testing.T) {
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	h := &clientcall.HTTP{URL: srv.URL}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			want := "req" + strconv.Itoa(i)
			if got, err := h.Call(t.Context(), []byte(want)); err != nil || string(got) != want {
				t.Errorf("Call = %q, %v; want %q, nil", got, err, want)
			}
		})
	}
	wg.Wait()
	if err := h.Teardown(t.Context()); err != nil {
		t.Errorf("Teardown: %v", err)
	}
	// After Teardown, Call sets up again.
	if got, err := h.Call(t.Context(), []byte("again")); err != nil || string(got) != "again" {
		t.Errorf("Call after Teardown = %q, %v; want \"again\", nil", got, err)
	}
	if err := h.Teardown(t.Context()); err != nil {
		t.Errorf("Teardown: %v", err)
	}
	if err := h.Teardown(t.Context()); err != nil {
		t.Errorf("second Teardown: %v", err)
	}
}

func TestHTTPLazySetupError(t *testing.T) {
	h := &clientcall.HTTP{}
	_, err := h.Call(t.Context(), nil)
	if want := "clientcall: HTTP.URL is empty"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

func TestHTTPHeaderEnv(t *testing.T) {
	const env = "CLIENTCALL_TEST_TOKEN"
	t.Setenv(env, "Bearer tok-123")
	var got struct{ auth, other, host string }
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.auth, got.other, got.host = r.Header.Get("Authorization"), r.Header.Get("X-Other"), r.Host
	}))
	h := newHTTP(t, &clientcall.HTTP{
		URL:       srv.URL,
		Headers:   map[string]string{"authorization": "overridden", "X-Other": "plain", "Host": "api.example"},
		HeaderEnv: map[string]string{"Authorization": env},
	})
	// The environment is read by Setup, not per call.
	t.Setenv(env, "changed")
	if _, err := h.Call(t.Context(), nil); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if got.auth != "Bearer tok-123" || got.other != "plain" || got.host != "api.example" {
		t.Errorf("server got Authorization %q, X-Other %q, Host %q; want %q, %q, %q",
			got.auth, got.other, got.host, "Bearer tok-123", "plain", "api.example")
	}
}

func TestHTTPSetupErrors(t *testing.T) {
	const secret = "planted-secret-value-42"
	t.Setenv("CLIENTCALL_TEST_EMPTY", "")
	t.Setenv("CLIENTCALL_TEST_BAD", "line\n"+secret)
	tests := []struct {
		name string
		h    clientcall.HTTP
		want string
	}{
		{"no URL", clientcall.HTTP{}, "clientcall: HTTP.URL is empty"},
		{"bad URL", clientcall.HTTP{URL: "http://h/%zz?key=" + secret}, `clientcall: HTTP.URL is invalid: invalid URL escape "%zz"`},
		{"bad scheme", clientcall.HTTP{URL: "ftp://h/x?key=" + secret}, "clientcall: HTTP.URL ftp://h/x?<redacted>: scheme must be http or https"},
		{"no host", clientcall.HTTP{URL: "http:///x"}, "clientcall: HTTP.URL http:///x has no host"},
		{"bad method", clientcall.HTTP{URL: "http://h", Method: "GET X"}, "clientcall: HTTP.Method is not a valid HTTP method"},
		{"negative timeout", clientcall.HTTP{URL: "http://h", Timeout: -time.Second}, "clientcall: HTTP.Timeout is negative (-1s)"},
		{"negative max bytes", clientcall.HTTP{URL: "http://h", MaxResponseBytes: -1}, "clientcall: HTTP.MaxResponseBytes is negative (-1)"},
		{"negative max conns", clientcall.HTTP{URL: "http://h", MaxConnsPerHost: -1}, "clientcall: HTTP.MaxConnsPerHost is negative (-1)"},
		{"bad header name", clientcall.HTTP{URL: "http://h", Headers: map[string]string{"X Key": secret}}, `clientcall: HTTP.Headers has an invalid header name "X Key"`},
		{"bad header value", clientcall.HTTP{URL: "http://h", Headers: map[string]string{"X-Key": "a\r\n" + secret}}, `clientcall: HTTP.Headers: value of header "X-Key" contains invalid characters`},
		{"env missing", clientcall.HTTP{URL: "http://h", HeaderEnv: map[string]string{"X-Key": "CLIENTCALL_TEST_MISSING"}}, `clientcall: environment variable CLIENTCALL_TEST_MISSING (HTTP.HeaderEnv for header "X-Key") is not set`},
		{"env empty", clientcall.HTTP{URL: "http://h", HeaderEnv: map[string]string{"X-Key": "CLIENTCALL_TEST_EMPTY"}}, `clientcall: environment variable CLIENTCALL_TEST_EMPTY (HTTP.HeaderEnv for header "X-Key") is empty`},
		{"env no name", clientcall.HTTP{URL: "http://h", HeaderEnv: map[string]string{"X-Key": ""}}, `clientcall: HTTP.HeaderEnv names no environment variable for header "X-Key"`},
		{"env bad value", clientcall.HTTP{URL: "http://h", HeaderEnv: map[string]string{"X-Key": "CLIENTCALL_TEST_BAD"}}, `clientcall: HTTP.HeaderEnv (variable CLIENTCALL_TEST_BAD): value of header "X-Key" contains invalid characters`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.h.Setup(t.Context())
			if err == nil || err.Error() != tt.want {
				t.Errorf("Setup() = %v, want %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("Setup() = %q, leaks the planted secret", err)
			}
		})
	}
}

// TestHTTPRedaction plants secrets in headers (direct and from the
// environment) and in the URL query, makes the server echo the request
// headers back in error bodies, and checks no secret reaches an error
// message or a printed HTTP.
func TestHTTPRedaction(t *testing.T) {
	const (
		direct   = "planted-direct-secret-1"
		bearer   = "planted-bearer-secret-2"
		fromEnv  = "planted-env-secret-3"
		inQuery  = "planted-query-secret-4"
		envName  = "CLIENTCALL_TEST_API_KEY"
		shortVal = "abc"
	)
	secrets := []string{direct, bearer, fromEnv, inQuery}
	t.Setenv(envName, fromEnv)

	var seen atomic.Int64
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Direct") == direct && r.Header.Get("Authorization") == "Bearer "+bearer &&
			r.Header.Get("X-Api-Key") == fromEnv && r.URL.Query().Get("key") == inQuery {
			seen.Add(1)
		}
		switch r.URL.Path {
		case "/hang":
			io.Copy(io.Discard, r.Body)
			hang(t, r)
			return
		case "/429":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
		case "/big":
			w.Write(make([]byte, 2048))
			return
		default:
			w.WriteHeader(500)
		}
		// Echo the request headers, tokens alone too.
		fmt.Fprintf(w, "%v %s %s", r.Header, bearer, r.URL)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	newH := func(base, path string) *clientcall.HTTP {
		return &clientcall.HTTP{
			URL:              base + path + "?key=" + inQuery,
			Headers:          map[string]string{"X-Direct": direct, "Authorization": "Bearer " + bearer, "X-Short": shortVal},
			HeaderEnv:        map[string]string{"X-Api-Key": envName},
			Timeout:          time.Second,
			MaxResponseBytes: 1024,
		}
	}
	var texts []string
	for _, c := range []struct{ base, path string }{
		{srv.URL, "/500"}, {srv.URL, "/429"}, {srv.URL, "/big"}, {refused, "/api"},
	} {
		h := newHTTP(t, newH(c.base, c.path))
		_, err := h.Call(t.Context(), []byte("x"))
		if err == nil {
			t.Fatalf("%s: got nil error, want one", c.path)
		}
		texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
	}
	h := newHTTP(t, newH(srv.URL, "/hang"))
	h.Timeout = 50 * time.Millisecond
	h.Setup(t.Context())
	if _, err := h.Call(t.Context(), nil); err == nil {
		t.Fatal("/hang: got nil error, want timeout")
	} else {
		texts = append(texts, err.Error())
	}
	wrapper := struct{ Caller *clientcall.HTTP }{h}
	texts = append(texts,
		h.String(), h.GoString(),
		fmt.Sprint(h), fmt.Sprintf("%v|%+v|%#v|%s|%q", h, h, h, h, h),
		fmt.Sprintf("%v|%+v|%#v|%s", *h, *h, *h, *h),
		fmt.Sprintf("%v|%+v|%#v", wrapper, wrapper, wrapper),
	)
	if got := seen.Load(); got != 4 { // all but the refused call
		t.Errorf("server saw the planted values on %d requests, want 4", got)
	}
	for _, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%q leaks planted secret %q", text, s)
			}
		}
	}
	if s := h.String(); !strings.Contains(s, "X-Direct:<redacted>") || !strings.Contains(s, "X-Api-Key:"+envName) {
		t.Errorf("String() = %q, want header names and env variable names", s)
	}
}

func TestHTTPString(t *testing.T) {
	tests := []struct {
		name   string
		h      clientcall.HTTP
		want   string
		wantGo string
	}{
		{
			name:   "defaults",
			h:      clientcall.HTTP{URL: "http://u:p@h:1/a?k=v"},
			want:   `clientcall.HTTP{Method: POST, URL: http://h:1/a?<redacted>, ContentType: application/octet-stream, Headers: map[], HeaderEnv: map[], Timeout: 2m0s, MaxResponseBytes: 10485760, MaxConnsPerHost: 512, ItemStatusField: ""}`,
			wantGo: `clientcall.HTTP{URL:"http://h:1/a?<redacted>", Method:"", ContentType:"", Headers:map[string]string(nil), HeaderEnv:map[string]string(nil), Timeout:0, MaxResponseBytes:0, MaxConnsPerHost:0, ItemStatusField:""}`,
		},
		{
			name: "set",
			h: clientcall.HTTP{URL: "https://h/a", Method: "PUT", ContentType: "text/plain",
				Headers: map[string]string{"B": "1", "A": "2"}, HeaderEnv: map[string]string{"C": "ENV_C"},
				Timeout: time.Second, MaxResponseBytes: 5, MaxConnsPerHost: 2, ItemStatusField: "status"},
			want:   `clientcall.HTTP{Method: PUT, URL: https://h/a, ContentType: text/plain, Headers: map[A:<redacted> B:<redacted>], HeaderEnv: map[C:ENV_C], Timeout: 1s, MaxResponseBytes: 5, MaxConnsPerHost: 2, ItemStatusField: "status"}`,
			wantGo: `clientcall.HTTP{URL:"https://h/a", Method:"PUT", ContentType:"text/plain", Headers:map[string]string{"A":"<redacted>", "B":"<redacted>"}, HeaderEnv:map[string]string{"C":"ENV_C"}, Timeout:1000000000, MaxResponseBytes:5, MaxConnsPerHost:2, ItemStatusField:"status"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := tt.h.GoString(); got != tt.wantGo {
				t.Errorf("GoString() = %q, want %q", got, tt.wantGo)
			}
		})
	}
}
