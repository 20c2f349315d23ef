package testserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func newServer(t *testing.T, cfg testserver.Config) *testserver.Server {
	t.Helper()
	s, err := testserver.NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestServerURLs(t *testing.T) {
	s := newServer(t, testserver.Config{})
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL: got %q, want http://127.0.0.1:port", s.URL)
	}
	if got, want := s.Endpoint(), s.URL+"/api"; got != want {
		t.Errorf("Endpoint(): got %q, want %q", got, want)
	}
	for _, path := range []string{"/healthz", "/", "/stats", "/metrics"} {
		res, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: got %d, want 200", path, res.StatusCode)
		}
	}
}

func TestServerRejectsOverQuota(t *testing.T) {
	s := newServer(t, testserver.Config{Quota: 2, Period: time.Minute, Mode: testserver.FixedWindow})
	var got []string
	for range 3 {
		res, err := http.Post(s.Endpoint(), "text/plain", strings.NewReader("hi"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		got = append(got, res.Status+" "+res.Header.Get("Retry-After"))
	}
	// The window started when the server did, so a little under 60s is left.
	want := []string{"200 OK ", "200 OK ", "429 Too Many Requests 60"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

// TestServerCostAndBatch runs a tokens-per-minute quota on a loopback
// server and sends it batches and single requests over HTTP.
func TestServerCostAndBatch(t *testing.T) {
	clock := newFakeClock()
	s := newServer(t, testserver.Config{
		Quota: 100, Period: time.Minute, CostHeader: "X-Cost", CostField: "tokens", ItemErrorRate: 0.5, Seed: 7, Now: clock.Now,
	})
	for i, step := range []struct {
		cost, body string // cost is the X-Cost header, "" for none
		want       string // status, Retry-After and body
	}{
		{"", `[{"tokens":60,"text":"a"},{"tokens":30}]`, `200  [{"tokens":60,"text":"a"},` + itemError + `]`},
		// 10 tokens left; 10 more come in 6s.
		{"", `{"tokens":20}`, "429 6 testserver: over quota\n"},
		{"10", `{"tokens":20}`, `200  {"tokens":20}`},
		{"101", "x", "413  testserver: cost 101 exceeds the quota's capacity of 100\n"},
		{" 7 ", "x", "429 5 testserver: over quota\n"}, // the header's spaces are not part of it
		{"seven", "x", `400  testserver: bad cost: cost header X-Cost: "seven" is not a non-negative integer` + "\n"},
	} {
		req, err := http.NewRequest("POST", s.Endpoint(), strings.NewReader(step.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if step.cost != "" {
			req.Header.Set("X-Cost", step.cost)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if got := fmt.Sprintf("%d %s %s", res.StatusCode, res.Header.Get("Retry-After"), body); got != step.want {
			t.Errorf("request %d: got %q, want %q", i, got, step.want)
		}
	}

	res, err := http.Get(s.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st testserver.Stats
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatalf("GET /stats: %v", err)
	}
	got := fmt.Sprintf("accepted %d (cost %d) rejected %d (cost %d) items %d (errors %d) bad_cost %d cost_too_large %d quota %d %s %q %q",
		st.Accepted, st.AcceptedCost, st.Rejected, st.RejectedCost, st.Items, st.ItemErrors, st.BadCost, st.CostTooLarge, st.Quota, st.Period, st.CostHeader, st.CostField)
	if want := `accepted 2 (cost 100) rejected 2 (cost 27) items 3 (errors 1) bad_cost 1 cost_too_large 1 quota 100 1m0s "X-Cost" "tokens"`; got != want {
		t.Errorf("GET /stats: got %s, want %s", got, want)
	}
}

func TestNewServerRejectsBadConfig(t *testing.T) {
	if _, err := testserver.NewServer(testserver.Config{Quota: -1}); err == nil {
		t.Errorf("NewServer(Quota: -1): got nil error, want one")
	}
	if _, err := testserver.Listen("127.0.0.1:notaport", testserver.Config{}); err == nil {
		t.Errorf("Listen(bad address): got nil error, want one")
	}
}

func TestCloseWaitsForInFlightRequest(t *testing.T) {
	const latency = 200 * time.Millisecond
	s, err := testserver.NewServer(testserver.Config{Latency: latency})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		status int
		body   string
		err    error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		res, err := http.Post(s.Endpoint(), "text/plain", strings.NewReader("slow"))
		if err != nil {
			done <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		done <- result{res.StatusCode, string(b), err}
	}()
	// Wait until the request has been counted, that is, it is in flight
	// inside its latency.
	for s.Handler.Stats().Accepted == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if got := time.Since(start); got < latency {
		t.Errorf("Close returned %v after the request started, want at least the latency %v", got, latency)
	}
	r := <-done
	if r.err != nil || r.status != http.StatusOK || r.body != "slow" {
		t.Errorf("in-flight request: got %d %q %v, want 200 %q", r.status, r.body, r.err, "slow")
	}
	if _, err := http.Get(s.URL + "/healthz"); err == nil {
		t.Errorf("GET after Close: got nil error, want one")
	}
	s.Close() // a second Close is harmless
}

func TestShutdownDeadline(t *testing.T) {
	s, err := testserver.NewServer(testserver.Config{Latency: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		res, err := http.Get(s.Endpoint())
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	for s.Handler.Stats().Accepted == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Errorf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
	}
	if err := <-errc; err == nil {
		t.Errorf("request cut off by Shutdown: got nil error, want one")
	}
}

func TestMaxConnsQueuesExcess(t *testing.T) {
	const maxConns, clients, latency = 2, 8, 40 * time.Millisecond
	s := newServer(t, testserver.Config{MaxConns: maxConns, Latency: latency})
	// One connection per request, so that connections come and go.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Go(func() {
			res, err := client.Post(s.Endpoint(), "text/plain", strings.NewReader("x"))
			if err != nil {
				errs <- err
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				errs <- &statusError{res.StatusCode}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("request: %v", err)
	}
	// At most maxConns requests were served at a time.
	if got, want := time.Since(start), clients/maxConns*latency; got < want {
		t.Errorf("%d requests took %v, want at least %v with %d connections", clients, got, want, maxConns)
	}
}

type statusError struct{ code int }

func (e *statusError) Error() string { return "status " + http.StatusText(e.code) }

func TestListenUnspecifiedHostURL(t *testing.T) {
	s, err := testserver.Listen("0.0.0.0:0", testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL: got %q, want http://127.0.0.1:port", s.URL)
	}
	res, err := http.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

// TestFixedWindowLatencyKeptAlive sends requests one after another on a
// single kept-alive connection to a fixed-window server with latency: each
// request, answered 200 or 429, is delayed by the latency, the connection
// is reused for all of them, and the window's counter resets on time.
func TestFixedWindowLatencyKeptAlive(t *testing.T) {
	const latency = 40 * time.Millisecond
	clock := newFakeClock()
	s := newServer(t, testserver.Config{
		Quota: 3, Period: 5 * time.Second, Mode: testserver.FixedWindow, Latency: latency, Now: clock.Now,
	})
	transport := &http.Transport{MaxConnsPerHost: 1}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	var dials, sent int
	for i, step := range []struct {
		advance time.Duration
		want    []string // status and Retry-After of each request, in order
	}{
		{0, []string{"200 ", "200 ", "200 ", "429 5", "429 5"}},
		{4500 * time.Millisecond, []string{"429 1"}},
		{500 * time.Millisecond, []string{"200 ", "200 ", "200 ", "429 5"}}, // a new window
	} {
		clock.Advance(step.advance)
		for j, want := range step.want {
			reused := false
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				ConnectStart: func(string, string) { dials++ },
				GotConn:      func(info httptrace.GotConnInfo) { reused = info.Reused },
			})
			req, err := http.NewRequestWithContext(ctx, "POST", s.Endpoint(), strings.NewReader("x"))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := client.Do(req)
			if err != nil {
				t.Fatalf("step %d request %d: %v", i, j, err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			elapsed := time.Since(start)
			if got := fmt.Sprintf("%d %s", res.StatusCode, res.Header.Get("Retry-After")); got != want {
				t.Errorf("step %d request %d: got %q, want %q", i, j, got, want)
			}
			if elapsed < latency {
				t.Errorf("step %d request %d: answered in %v, want at least the latency %v", i, j, elapsed, latency)
			}
			if sent > 0 && !reused {
				t.Errorf("step %d request %d: got a new connection, want the kept-alive one", i, j)
			}
			sent++
		}
	}
	if got, want := dials, 1; got != want {
		t.Errorf("connections dialled: got %d, want %d", got, want)
	}
	st := s.Handler.Stats()
	if st.Accepted != 6 || st.Rejected != 4 {
		t.Errorf("Stats(): got accepted %d rejected %d, want 6 4", st.Accepted, st.Rejected)
	}
}
