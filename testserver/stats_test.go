package testserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// trafficAcrossSeconds sends a known mix of requests over three seconds of
// clock (starting at Unix second 1_000_000) and returns the Stats it should
// produce.
func trafficAcrossSeconds(t *testing.T, h *testserver.Handler, clock *fakeClock) testserver.Stats {
	t.Helper()
	// Second 0: 3 accepted, 2 rejected, 1 too large, 4 client throttles.
	for range 5 {
		serve(h, "POST", "/api", "x")
	}
	serve(h, "POST", "/api", strings.Repeat("x", 100))
	h.ReportClientThrottled(4)
	// Second 1 (+1.5s): the bucket is full again; all 3 are errors, then 1 rejected.
	clock.Advance(1500 * time.Millisecond)
	h.SetErrorRate(1)
	for range 4 {
		serve(h, "POST", "/api", "x")
	}
	h.SetErrorRate(0)
	// Second 3 (+2s): an outage rejects 2, a report adds 1.
	clock.Advance(2 * time.Second)
	h.SetOutage(503)
	serve(h, "GET", "/api/x", "")
	serve(h, "GET", "/api/y", "")
	if r := serve(h, "POST", "/report?client_throttled=1", ""); r.status != 200 {
		t.Fatalf("POST /report: got %d, want 200", r.status)
	}
	return testserver.Stats{
		Accepted: 3, Rejected: 5, Errors: 3, TooLarge: 1, ClientThrottled: 5,
		// With no cost configured, every request costs 1.
		AcceptedCost: 3, RejectedCost: 5, ErrorCost: 3, Items: 3,
		Quota: 3, Period: "1s", Mode: testserver.TokenBucket, Outage: 503,
		Series: []testserver.Second{
			{T: 1_000_000, Accepted: 3, Rejected: 2, ClientThrottled: 4, AcceptedCost: 3, RejectedCost: 2},
			{T: 1_000_001, Errors: 3, Rejected: 1, ErrorCost: 3, RejectedCost: 1},
			{T: 1_000_003, Rejected: 2, ClientThrottled: 1, RejectedCost: 2},
		},
	}
}

func TestStats(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Quota: 3, MaxBodyBytes: 10, Now: clock.Now})
	want := trafficAcrossSeconds(t, h, clock)
	if diff := cmp.Diff(want, h.Stats()); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}

	r := serve(h, "GET", "/stats", "")
	if got, want := r.header.Get("Content-Type"), "application/json"; got != want {
		t.Errorf("GET /stats Content-Type: got %q, want %q", got, want)
	}
	var got testserver.Stats
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Fatalf("GET /stats: %v in %s", err, r.body)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /stats mismatch (-want +got):\n%s", diff)
	}
	// The JSON names are part of the API.
	for _, name := range []string{`"accepted":3`, `"rejected":5`, `"errors":3`, `"client_throttled":5`, `"quota":3`, `"period":"1s"`, `"series":[{"t":1000000,`} {
		if !strings.Contains(r.body, name) {
			t.Errorf("GET /stats: got %s, want it to contain %s", r.body, name)
		}
	}
}

// serveAs sends one API request straight to h naming client with
// testserver.ClientHeader ("" for none).
func serveAs(h http.Handler, client, body string) int {
	req := httptest.NewRequest("POST", "/api", strings.NewReader(body))
	if client != "" {
		req.Header.Set(testserver.ClientHeader, client)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func TestStatsClients(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Quota: 3, Mode: testserver.FixedWindow, MaxBodyBytes: 10, Now: clock.Now})
	// Second 0: a takes two of the 3, b one, then a and untagged are rejected;
	// a too-large request is in the totals only.
	for _, c := range []string{"a", "b", "a", "a", ""} {
		serveAs(h, c, "x")
	}
	serveAs(h, "b", strings.Repeat("x", 100))
	// Second 1: a new window; an injected error for b, one untagged accept.
	clock.Advance(time.Second)
	h.SetErrorRate(1)
	serveAs(h, "b", "x")
	h.SetErrorRate(0)
	serveAs(h, "", "x")

	got := h.Stats()
	want := testserver.Stats{
		Accepted: 4, Rejected: 2, Errors: 1, TooLarge: 1,
		AcceptedCost: 4, RejectedCost: 2, ErrorCost: 1, Items: 4,
		Quota: 3, Period: "1s", Mode: testserver.FixedWindow,
		Clients: map[string]testserver.Counts{
			"a": {Accepted: 2, Rejected: 1, AcceptedCost: 2, RejectedCost: 1},
			"b": {Accepted: 1, Errors: 1, AcceptedCost: 1, ErrorCost: 1},
		},
		Series: []testserver.Second{
			{T: 1_000_000, Accepted: 3, Rejected: 2, AcceptedCost: 3, RejectedCost: 2, Clients: map[string]testserver.Counts{
				"a": {Accepted: 2, Rejected: 1, AcceptedCost: 2, RejectedCost: 1},
				"b": {Accepted: 1, AcceptedCost: 1},
			}},
			{T: 1_000_001, Accepted: 1, Errors: 1, AcceptedCost: 1, ErrorCost: 1, Clients: map[string]testserver.Counts{
				"b": {Errors: 1, ErrorCost: 1},
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}

	// The snapshot is a copy: changing it changes nothing in the handler.
	got.Clients["a"] = testserver.Counts{}
	got.Series[0].Clients["a"] = testserver.Counts{}
	if diff := cmp.Diff(want, h.Stats()); diff != "" {
		t.Errorf("Stats() after changing a snapshot (-want +got):\n%s", diff)
	}

	// The JSON names are part of the API.
	r := serve(h, "GET", "/stats", "")
	for _, name := range []string{`"clients":{"a":{"accepted":2,"rejected":1,"errors":0,"accepted_cost":2,"rejected_cost":1,"error_cost":0}`} {
		if !strings.Contains(r.body, name) {
			t.Errorf("GET /stats: got %s, want it to contain %s", r.body, name)
		}
	}

	// Reset forgets the clients.
	h.Reset()
	if s := h.Stats(); s.Clients != nil {
		t.Errorf("after Reset: Clients = %v, want nil", s.Clients)
	}
}

func TestStatsClientsAreBounded(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	for i := range testserver.MaxClients + 5 {
		serveAs(h, fmt.Sprintf("c%02d", i), "x")
	}
	serveAs(h, "c00", "x") // a known name is still counted
	s := h.Stats()
	if got, want := s.Accepted, int64(testserver.MaxClients+6); got != want {
		t.Errorf("Accepted: got %d, want %d", got, want)
	}
	if got, want := len(s.Clients), testserver.MaxClients; got != want {
		t.Errorf("len(Clients): got %d, want %d", got, want)
	}
	if got, want := s.Clients["c00"].Accepted, int64(2); got != want {
		t.Errorf("Clients[c00].Accepted: got %d, want %d", got, want)
	}
	if _, ok := s.Clients[fmt.Sprintf("c%02d", testserver.MaxClients)]; ok {
		t.Errorf("Clients has the client past MaxClients")
	}
}

func TestStatsSeriesIsBounded(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Now: clock.Now})
	const seconds = 3700
	for range seconds {
		serve(h, "POST", "/api", "x")
		clock.Advance(time.Second)
	}
	s := h.Stats()
	if got, want := s.Accepted, int64(seconds); got != want {
		t.Errorf("Accepted: got %d, want %d", got, want)
	}
	if got, want := len(s.Series), 3600; got != want {
		t.Fatalf("len(Series): got %d, want %d", got, want)
	}
	if got, want := s.Series[len(s.Series)-1].T, clock.Now().Unix()-1; got != want {
		t.Errorf("last second: got %d, want %d", got, want)
	}
}

func TestMetrics(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Quota: 3, MaxBodyBytes: 10, Now: clock.Now})
	stats := trafficAcrossSeconds(t, h, clock)

	got := scrape(t, h)
	want := map[string]float64{
		"quotaserver_requests_total{outcome=accepted}":       float64(stats.Accepted),
		"quotaserver_requests_total{outcome=rejected}":       float64(stats.Rejected),
		"quotaserver_requests_total{outcome=error}":          float64(stats.Errors),
		"quotaserver_requests_total{outcome=too_large}":      float64(stats.TooLarge),
		"quotaserver_requests_total{outcome=bad_cost}":       float64(stats.BadCost),
		"quotaserver_requests_total{outcome=cost_too_large}": float64(stats.CostTooLarge),
		"quotaserver_cost_total{outcome=accepted}":           float64(stats.AcceptedCost),
		"quotaserver_cost_total{outcome=rejected}":           float64(stats.RejectedCost),
		"quotaserver_cost_total{outcome=error}":              float64(stats.ErrorCost),
		"quotaserver_items_total{outcome=ok}":                float64(stats.Items - stats.ItemErrors),
		"quotaserver_items_total{outcome=error}":             float64(stats.ItemErrors),
		"quotaserver_client_throttled_total":                 float64(stats.ClientThrottled),
		"quotaserver_quota":                                  3,
		"quotaserver_quota_period_seconds":                   1,
		"quotaserver_outage_status":                          503,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics mismatch (-want +got):\n%s", diff)
	}

	// Reset zeroes the counters too, keeping every outcome present.
	h.Reset()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(serve(h, "GET", "/metrics", "").body))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		outcomes int
	}{
		{"quotaserver_requests_total", 6},
		{"quotaserver_cost_total", 3},
		{"quotaserver_items_total", 2},
	} {
		for _, m := range families[tc.name].GetMetric() {
			if v := m.GetCounter().GetValue(); v != 0 {
				t.Errorf("after Reset: %s %v = %v, want 0", tc.name, m.GetLabel(), v)
			}
		}
		if got := len(families[tc.name].GetMetric()); got != tc.outcomes {
			t.Errorf("after Reset: got %d outcomes of %s, want %d", got, tc.name, tc.outcomes)
		}
	}
}

// scrape returns the samples of GET /metrics on h by name and labels,
// such as quotaserver_requests_total{outcome=accepted}.
func scrape(t *testing.T, h *testserver.Handler) map[string]float64 {
	t.Helper()
	r := serve(h, "GET", "/metrics", "")
	if r.status != 200 {
		t.Fatalf("GET /metrics: got %d, want 200", r.status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(r.body))
	if err != nil {
		t.Fatalf("GET /metrics does not parse as Prometheus text: %v\n%s", err, r.body)
	}
	got := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				key += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			switch {
			case m.GetCounter() != nil:
				got[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				got[key] = m.GetGauge().GetValue()
			}
		}
	}
	return got
}

// TestStatsCost sends requests with costs, batches and item errors over
// two seconds and checks every cost and item count, in Stats, GET /stats,
// GET /metrics and after Reset.
func TestStatsCost(t *testing.T) {
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Quota: 10, Mode: testserver.FixedWindow, CostField: "tokens", Now: clock.Now})
	send := func(client, body string, want int) {
		t.Helper()
		if got := serveAs(h, client, body); got != want {
			t.Fatalf("%s: got %d, want %d", body, got, want)
		}
	}
	// Second 0: 9 of the 10 tokens used.
	send("a", `[{"tokens":3},{"tokens":2}]`, 200)
	send("", `{"tokens":4}`, 200)
	send("a", `{"tokens":3}`, 429)
	send("a", `{"tokens":11}`, 413)
	send("a", `{"tokens":-1}`, 400)
	// Second 1: a new window; a batch whose items all fail, an injected
	// error, then an outage.
	clock.Advance(time.Second)
	h.SetItemErrorRate(1)
	send("b", `[{"tokens":1},{},"x"]`, 200)
	h.SetItemErrorRate(0)
	h.SetErrorRate(1)
	send("b", `{"tokens":2}`, 500)
	h.SetErrorRate(0)
	h.SetOutage(503)
	send("", `{"tokens":"bad"}`, 503) // an unreadable cost counts 1
	send("", `{"tokens":5}`, 503)

	want := testserver.Stats{
		Accepted: 3, Rejected: 3, Errors: 1, BadCost: 1, CostTooLarge: 1,
		AcceptedCost: 12, RejectedCost: 9, ErrorCost: 2, Items: 6, ItemErrors: 3,
		Quota: 10, Period: "1s", Mode: testserver.FixedWindow, CostField: "tokens", Outage: 503,
		Clients: map[string]testserver.Counts{
			"a": {Accepted: 1, Rejected: 1, AcceptedCost: 5, RejectedCost: 3},
			"b": {Accepted: 1, Errors: 1, AcceptedCost: 3, ErrorCost: 2},
		},
		Series: []testserver.Second{
			{T: 1_000_000, Accepted: 2, Rejected: 1, AcceptedCost: 9, RejectedCost: 3, Clients: map[string]testserver.Counts{
				"a": {Accepted: 1, Rejected: 1, AcceptedCost: 5, RejectedCost: 3},
			}},
			{T: 1_000_001, Accepted: 1, Rejected: 2, Errors: 1, AcceptedCost: 3, RejectedCost: 6, ErrorCost: 2, Clients: map[string]testserver.Counts{
				"b": {Accepted: 1, Errors: 1, AcceptedCost: 3, ErrorCost: 2},
			}},
		},
	}
	if diff := cmp.Diff(want, h.Stats()); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}

	r := serve(h, "GET", "/stats", "")
	var got testserver.Stats
	if err := json.Unmarshal([]byte(r.body), &got); err != nil {
		t.Fatalf("GET /stats: %v in %s", err, r.body)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /stats mismatch (-want +got):\n%s", diff)
	}
	// The JSON names are part of the API.
	for _, name := range []string{
		`"bad_cost":1`, `"cost_too_large":1`, `"accepted_cost":12`, `"rejected_cost":9`, `"error_cost":2`,
		`"items":6`, `"item_errors":3`, `"cost_field":"tokens"`,
		`"series":[{"t":1000000,"accepted":2,"rejected":1,"errors":0,"client_throttled":0,"accepted_cost":9,"rejected_cost":3,"error_cost":0,`,
		`"a":{"accepted":1,"rejected":1,"errors":0,"accepted_cost":5,"rejected_cost":3,"error_cost":0}`,
	} {
		if !strings.Contains(r.body, name) {
			t.Errorf("GET /stats: got %s, want it to contain %s", r.body, name)
		}
	}

	metrics := scrape(t, h)
	for name, want := range map[string]float64{
		"quotaserver_requests_total{outcome=bad_cost}":       1,
		"quotaserver_requests_total{outcome=cost_too_large}": 1,
		"quotaserver_cost_total{outcome=accepted}":           12,
		"quotaserver_cost_total{outcome=rejected}":           9,
		"quotaserver_cost_total{outcome=error}":              2,
		"quotaserver_items_total{outcome=ok}":                3,
		"quotaserver_items_total{outcome=error}":             3,
	} {
		if got := metrics[name]; got != want {
			t.Errorf("GET /metrics %s: got %v, want %v", name, got, want)
		}
	}

	// Reset zeroes them all.
	h.Reset()
	wantReset := testserver.Stats{Quota: 10, Period: "1s", Mode: testserver.FixedWindow, CostField: "tokens", Outage: 503, Series: []testserver.Second{}}
	if diff := cmp.Diff(wantReset, h.Stats()); diff != "" {
		t.Errorf("Stats() after Reset mismatch (-want +got):\n%s", diff)
	}
}

func TestSpan(t *testing.T) {
	clock := newFakeClock()
	t0 := clock.Now()
	h := newHandler(t, testserver.Config{Quota: 10, Mode: testserver.GCRA, MaxBodyBytes: 10, Now: clock.Now})
	for i, s := range []struct {
		advance      time.Duration
		client, body string
		want         int
	}{
		{0, "a", "x", http.StatusOK},
		{30 * time.Millisecond, "b", "x", http.StatusTooManyRequests}, // b's first, rejected
		{100 * time.Millisecond, "a", "x", http.StatusOK},
		{10 * time.Millisecond, "a", "x", http.StatusTooManyRequests},                  // not a's last accepted
		{100 * time.Millisecond, "", "x", http.StatusOK},                               // unnamed: no span
		{time.Second, "c", strings.Repeat("x", 100), http.StatusRequestEntityTooLarge}, // not counted
	} {
		clock.Advance(s.advance)
		if got := serveAs(h, s.client, s.body); got != s.want {
			t.Fatalf("step %d: got %d, want %d", i, got, s.want)
		}
	}
	for client, want := range map[string]testserver.Span{
		"a": {First: t0, LastAccepted: t0.Add(130 * time.Millisecond)},
		"b": {First: t0.Add(30 * time.Millisecond)},
		"":  {},
		"c": {},
	} {
		if got := h.Span(client); !got.First.Equal(want.First) || !got.LastAccepted.Equal(want.LastAccepted) {
			t.Errorf("Span(%q): got %+v, want %+v", client, got, want)
		}
	}
	h.Reset()
	if got := h.Span("a"); got != (testserver.Span{}) {
		t.Errorf("Span(a) after Reset: got %+v, want zero", got)
	}
}
