package testserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// costHeader is the cost header these tests configure.
const costHeader = "X-Cost"

// costStep advances the clock, then sends one request whose cost is in
// costHeader.
type costStep struct {
	advance        time.Duration
	cost           string
	want           int
	wantRetryAfter string // "" for none
}

// serveCost sends one API request straight to h with body and, unless
// they are nil, the given values of costHeader.
func serveCost(h http.Handler, body string, costs ...string) response {
	req := httptest.NewRequest("POST", "/api", strings.NewReader(body))
	for _, c := range costs {
		req.Header.Add(costHeader, c)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{status: rec.Code, retryAfter: rec.Header().Get("Retry-After"), header: rec.Header(), body: rec.Body.String()}
}

func TestCostModes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   testserver.Config
		steps []costStep
	}{
		{
			name: "token bucket, 10 per second",
			cfg:  testserver.Config{Quota: 10},
			steps: []costStep{
				{0, "4", 200, ""},
				{0, "6", 200, ""},
				{0, "1", 429, "1"},
				{0, "0", 200, ""}, // cost 0 always fits
				{0, "11", 413, ""},
				{500 * time.Millisecond, "6", 429, "1"}, // 5 tokens: all or nothing
				{100 * time.Millisecond, "6", 200, ""},
				{10 * time.Second, "10", 200, ""}, // the whole capacity at once
			},
		},
		{
			name: "token bucket, 60 per minute: Retry-After for a large cost",
			cfg:  testserver.Config{Quota: 60, Period: time.Minute},
			steps: []costStep{
				{0, "60", 200, ""},
				{0, "30", 429, "30"},
				{0, "1", 429, "1"},
				{10 * time.Second, "30", 429, "20"}, // the 429s used nothing
				{20 * time.Second, "30", 200, ""},
				{0, "61", 413, ""},
			},
		},
		{
			name: "fixed window, 10 per 10s",
			cfg:  testserver.Config{Quota: 10, Period: 10 * time.Second, Mode: testserver.FixedWindow},
			steps: []costStep{
				{0, "7", 200, ""},
				{0, "4", 429, "10"}, // does not fit, uses nothing
				{0, "3", 200, ""},   // fits exactly
				{0, "0", 200, ""},
				{0, "1", 429, "10"},
				{4 * time.Second, "10", 429, "6"},
				{0, "11", 413, ""}, // never 429, whatever is left
				{6 * time.Second, "10", 200, ""},
			},
		},
		{
			name: "gcra, 6 per minute, burst 3",
			cfg:  testserver.Config{Quota: 6, Period: time.Minute, Mode: testserver.GCRA, Burst: 3}, // T = 10s
			steps: []costStep{
				{0, "3", 200, ""},                 // TAT = +30s
				{0, "2", 429, "20"},               // until TAT + T - tau = +20s
				{0, "1", 429, "10"},               // until TAT - tau = +10s
				{0, "4", 413, ""},                 // more than the burst
				{20 * time.Second, "2", 200, ""},  // TAT = +50s
				{0, "1", 429, "10"},               // at +20s, until +30s
				{time.Hour, "4", 413, ""},         // idle time is not banked
				{0, "3", 200, ""},                 // idle: the burst again, TAT = +30s
				{0, "0", 200, ""},                 // cost 0 always fits
				{29 * time.Second, "3", 429, "1"}, // until TAT + 2T - tau = +30s
				{time.Second, "3", 200, ""},       // idle exactly
				{10 * time.Second, "1", 200, ""},  // at TAT - tau
				{0, "1", 429, "10"},
			},
		},
		{
			name: "gcra, no burst: cost 1 at most",
			cfg:  testserver.Config{Quota: 10, Mode: testserver.GCRA},
			steps: []costStep{
				{0, "2", 413, ""},
				{0, "1", 200, ""},
				{0, "1", 429, "1"},
				{0, "0", 200, ""},
				{time.Minute, "2", 413, ""},
			},
		},
		{
			name: "unlimited",
			cfg:  testserver.Config{},
			steps: []costStep{
				{0, "9223372036854775807", 200, ""},
				{0, "0", 200, ""},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			tc.cfg.Now, tc.cfg.CostHeader = clock.Now, costHeader
			h := newHandler(t, tc.cfg)
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				r := serveCost(h, "x", s.cost)
				if r.status != s.want || r.retryAfter != s.wantRetryAfter {
					t.Fatalf("step %d (+%v), cost %s: got %d Retry-After %q (%q), want %d Retry-After %q",
						i, s.advance, s.cost, r.status, r.retryAfter, r.body, s.want, s.wantRetryAfter)
				}
				if r.status == http.StatusRequestEntityTooLarge && !strings.Contains(r.body, "testserver: cost "+s.cost+" exceeds the quota's capacity") {
					t.Errorf("step %d: 413 body %q, want it to say the cost exceeds the quota's capacity", i, r.body)
				}
			}
		})
	}
}

// TestCostTooLargeUsesNoQuota checks that a 413 for a cost that can never
// fit is counted in CostTooLarge, not as rejected, and leaves the quota
// alone.
func TestCostTooLargeUsesNoQuota(t *testing.T) {
	for _, mode := range []testserver.Mode{testserver.TokenBucket, testserver.FixedWindow, testserver.GCRA} {
		t.Run(string(mode), func(t *testing.T) {
			clock := newFakeClock()
			cfg := testserver.Config{Quota: 5, Mode: mode, CostHeader: costHeader, Now: clock.Now}
			if mode == testserver.GCRA {
				cfg.Burst = 5
			}
			h := newHandler(t, cfg)
			for range 3 {
				if r := serveCost(h, "x", "6"); r.status != http.StatusRequestEntityTooLarge {
					t.Fatalf("cost 6: got %d %q, want 413", r.status, r.body)
				}
			}
			if r := serveCost(h, "x", "5"); r.status != http.StatusOK {
				t.Errorf("cost 5 after the 413s: got %d %q, want 200", r.status, r.body)
			}
			s := h.Stats()
			if s.CostTooLarge != 3 || s.Rejected != 0 || s.RejectedCost != 0 || s.TooLarge != 0 || s.Accepted != 1 || s.AcceptedCost != 5 {
				t.Errorf("Stats(): got cost_too_large %d rejected %d (cost %d) too_large %d accepted %d (cost %d), want 3 0 (0) 0 1 (5)",
					s.CostTooLarge, s.Rejected, s.RejectedCost, s.TooLarge, s.Accepted, s.AcceptedCost)
			}
		})
	}
}

func TestCostPrecedence(t *testing.T) {
	const (
		header = 1 << iota // configure CostHeader
		field              // configure CostField "tokens"
	)
	for _, tc := range []struct {
		name  string
		cfg   int
		costs []string // values of costHeader sent
		body  string
		want  int64 // the request's cost, as Stats().AcceptedCost
	}{
		{"nothing configured", 0, []string{"5"}, `{"tokens":7}`, 1},
		{"nothing configured, batch", 0, nil, `[{"tokens":7},{"tokens":8}]`, 1},
		{"header", header, []string{"5"}, `{"tokens":7}`, 5},
		{"header absent", header, nil, `{"tokens":7}`, 1},
		{"header absent, batch", header, nil, `[1,2,3]`, 1},
		{"header zero", header, []string{"0"}, "x", 0},
		{"field", field, nil, `{"tokens":7}`, 7},
		{"field, header not configured", field, []string{"5"}, `{"tokens":7}`, 7},
		{"field zero", field, nil, `{"tokens":0}`, 0},
		{"field with spaces", field, nil, ` { "tokens" : 7 , "text": "abc" } `, 7},
		{"field missing", field, nil, `{"other":7}`, 1},
		{"field only at the top level", field, nil, `{"a":{"tokens":7}}`, 1},
		{"body not JSON", field, nil, `tokens: 7`, 1},
		{"body a JSON string", field, nil, `"tokens"`, 1},
		{"body null", field, nil, `null`, 1},
		{"empty body", field, nil, ``, 1},
		{"both: the header wins", header | field, []string{"5"}, `{"tokens":7}`, 5},
		{"both: a bad field is not read", header | field, []string{"5"}, `{"tokens":"many"}`, 5},
		{"both: no header, the field", header | field, nil, `{"tokens":7}`, 7},
		{"both: no header, no field", header | field, nil, `{"other":7}`, 1},
		{"batch: the sum", field, nil, `[{"tokens":3},{"tokens":4}]`, 7},
		{"batch: missing fields and non-objects count 1", field, nil, `[{"tokens":3},{"x":1},"s",7,null,[1],{"tokens":0}]`, 8},
		{"batch: empty", field, nil, `[]`, 0},
		{"batch: the header wins", header | field, []string{"2"}, `[{"tokens":3},{"tokens":4}]`, 2},
		{"batch: not valid JSON is not a batch", field, nil, `[{"tokens":3},`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testserver.Config{Quota: 1000, Now: newFakeClock().Now}
			if tc.cfg&header != 0 {
				cfg.CostHeader = costHeader
			}
			if tc.cfg&field != 0 {
				cfg.CostField = "tokens"
			}
			h := newHandler(t, cfg)
			if r := serveCost(h, tc.body, tc.costs...); r.status != http.StatusOK {
				t.Fatalf("got %d %q, want 200", r.status, r.body)
			}
			if got := h.Stats().AcceptedCost; got != tc.want {
				t.Errorf("cost: got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestBadCost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		costs []string
		body  string
		want  string // in the 400's message
	}{
		{"header not a number", []string{"abc"}, "x", `cost header X-Cost: "abc" is not a non-negative integer`},
		{"header negative", []string{"-1"}, "x", `"-1" is not a non-negative integer`},
		{"header with a sign", []string{"+1"}, "x", `"+1" is not`},
		{"header fraction", []string{"1.5"}, "x", `"1.5" is not`},
		{"header exponent", []string{"1e3"}, "x", `"1e3" is not`},
		{"header empty", []string{""}, "x", `"" is not`},
		{"header overflows", []string{"9223372036854775808"}, "x", `"9223372036854775808" is not`},
		{"header twice", []string{"1", "2"}, "x", "cost header X-Cost given 2 times"},
		{"field negative", nil, `{"tokens":-1}`, `cost field "tokens": -1 is not a non-negative integer`},
		{"field fraction", nil, `{"tokens":1.5}`, `1.5 is not`},
		{"field exponent", nil, `{"tokens":1e3}`, `1e3 is not`},
		{"field a string", nil, `{"tokens":"5"}`, `"5" is not`},
		{"field null", nil, `{"tokens":null}`, `null is not`},
		{"field an object", nil, `{"tokens":{}}`, `{} is not`},
		{"field overflows", nil, `{"tokens":9223372036854775808}`, `9223372036854775808 is not`},
		{"batch item", nil, `[{"tokens":1},{"tokens":-2}]`, `item 1: cost field "tokens": -2 is not`},
		{"batch sum overflows", nil, `[{"tokens":9223372036854775807},{"tokens":1}]`, `the items' costs add up to more than 9223372036854775807`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newHandler(t, testserver.Config{Quota: 1, CostHeader: costHeader, CostField: "tokens", Now: clock.Now})
			r := serveCost(h, tc.body, tc.costs...)
			if r.status != http.StatusBadRequest || !strings.HasPrefix(r.body, "testserver: bad cost: ") || !strings.Contains(r.body, tc.want) {
				t.Errorf("got %d %q, want 400 %q", r.status, r.body, "testserver: bad cost: ..."+tc.want+"...")
			}
			// The 400 used no quota and is counted on its own.
			if r := serveCost(h, "x"); r.status != http.StatusOK {
				t.Errorf("request after the 400: got %d %q, want 200", r.status, r.body)
			}
			s := h.Stats()
			if s.BadCost != 1 || s.Accepted != 1 || s.AcceptedCost != 1 || s.Rejected != 0 || s.Errors != 0 {
				t.Errorf("Stats(): got bad_cost %d accepted %d (cost %d) rejected %d errors %d, want 1 1 (1) 0 0",
					s.BadCost, s.Accepted, s.AcceptedCost, s.Rejected, s.Errors)
			}
		})
	}
}

// TestCostDuringOutage checks that an outage answers every request first,
// whatever its cost, and counts its cost as rejected (1 if unreadable).
func TestCostDuringOutage(t *testing.T) {
	h := newHandler(t, testserver.Config{Quota: 5, CostHeader: costHeader, Now: newFakeClock().Now})
	h.SetOutage(http.StatusServiceUnavailable)
	for _, cost := range []string{"3", "bad", "100"} {
		if r := serveCost(h, "x", cost); r.status != http.StatusServiceUnavailable {
			t.Errorf("cost %s during an outage: got %d, want 503", cost, r.status)
		}
	}
	if s := h.Stats(); s.Rejected != 3 || s.RejectedCost != 3+1+100 || s.BadCost != 0 || s.CostTooLarge != 0 {
		t.Errorf("Stats(): got rejected %d (cost %d) bad_cost %d cost_too_large %d, want 3 (104) 0 0", s.Rejected, s.RejectedCost, s.BadCost, s.CostTooLarge)
	}
}
