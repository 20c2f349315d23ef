package testserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// itemError is the answer entry of an item failed by ItemErrorRate.
const itemError = `{"status":500,"error":"testserver: injected item error"}`

func TestBatchEcho(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		want, wantType          string
		wantItems               int64
	}{
		{"objects", "application/json", `[{"a":1},{"b":[1,2]}]`, `[{"a":1},{"b":[1,2]}]`, "application/json", 2},
		{"items unchanged, separators compacted", "application/json", " [ {\"a\" : 1} ,\n \"x\", 3, null ] ", `[{"a" : 1},"x",3,null]`, "application/json", 4},
		{"any Content-Type", "text/plain", `[1,2,3]`, `[1,2,3]`, "application/json", 3},
		{"no Content-Type", "", `["a"]`, `["a"]`, "application/json", 1},
		{"empty", "application/json", `[]`, `[]`, "application/json", 0},
		{"nested arrays are items", "application/json", `[[1,2],[3]]`, `[[1,2],[3]]`, "application/json", 2},
		{"not valid JSON: echoed", "application/json", `[1,`, `[1,`, "application/json", 1},
		{"an object: echoed", "application/json", `{"a":[1]}`, `{"a":[1]}`, "application/json", 1},
		{"text: echoed", "text/plain", `[x]`, `[x]`, "text/plain", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandler(t, testserver.Config{})
			req := httptest.NewRequest("POST", "/api", strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
				t.Errorf("got %d %q, want 200 %q", rec.Code, rec.Body.String(), tc.want)
			}
			if got := rec.Header().Get("Content-Type"); got != tc.wantType {
				t.Errorf("Content-Type: got %q, want %q", got, tc.wantType)
			}
			if got := h.Stats().Items; got != tc.wantItems {
				t.Errorf("Stats().Items: got %d, want %d", got, tc.wantItems)
			}
		})
	}
}

// batchOf returns a batch of n items {"i":k}.
func batchOf(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"i":%d}`, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// failedItems sends batches of size items to h and returns the indices
// (across batches) of the items whose answer entry is itemError, checking
// that every other entry is its item.
func failedItems(t *testing.T, h *testserver.Handler, batches, size int) []int {
	t.Helper()
	var failed []int
	for b := range batches {
		body := batchOf(size)
		r := serve(h, "POST", "/api", body)
		if r.status != http.StatusOK {
			t.Fatalf("batch %d: got %d %q, want 200", b, r.status, r.body)
		}
		var sent, got []json.RawMessage
		if err := json.Unmarshal([]byte(body), &sent); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			t.Fatalf("batch %d: answer %q is not a JSON array: %v", b, r.body, err)
		}
		if len(got) != len(sent) {
			t.Fatalf("batch %d: got %d entries, want %d", b, len(got), len(sent))
		}
		for i := range got {
			switch string(got[i]) {
			case string(sent[i]):
			case itemError:
				failed = append(failed, b*size+i)
			default:
				t.Fatalf("batch %d item %d: got %s, want %s or %s", b, i, got[i], sent[i], itemError)
			}
		}
	}
	return failed
}

func TestItemErrorRate(t *testing.T) {
	const batches, size = 10, 100
	for _, tc := range []struct {
		name     string
		rate     float64
		seed     uint64
		min, max int // bounds on the failed items, to check the rate is roughly honoured
	}{
		{"zero", 0, 1, 0, 0},
		{"all", 1, 1, batches * size, batches * size},
		{"30% seed 1", 0.3, 1, 250, 350},
		{"30% seed 2", 0.3, 2, 250, 350},
		{"5% seed 0", 0.05, 0, 20, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() []int {
				h := newHandler(t, testserver.Config{ItemErrorRate: tc.rate, Seed: tc.seed})
				failed := failedItems(t, h, batches, size)
				s := h.Stats()
				if s.Items != batches*size || s.ItemErrors != int64(len(failed)) || s.Accepted != batches || s.Errors != 0 {
					t.Errorf("Stats(): got items %d item_errors %d accepted %d errors %d, want %d %d %d 0",
						s.Items, s.ItemErrors, s.Accepted, s.Errors, batches*size, len(failed), batches)
				}
				return failed
			}
			first, second := run(), run()
			if !slices.Equal(first, second) {
				t.Errorf("two runs with seed %d fail different items", tc.seed)
			}
			if got := len(first); got < tc.min || got > tc.max {
				t.Errorf("failed items: got %d, want within [%d, %d]", got, tc.min, tc.max)
			}
		})
	}
}

// TestItemErrorRateExactCount pins the count for one seed, so that a
// change in the random source is noticed.
func TestItemErrorRateExactCount(t *testing.T) {
	h := newHandler(t, testserver.Config{ItemErrorRate: 0.3, Seed: 42})
	if got, want := len(failedItems(t, h, 10, 100)), itemErrorsSeed42; got != want {
		t.Errorf("failed items of 1000 at 30%% with seed 42: got %d, want %d", got, want)
	}
}

// itemErrorsSeed42 is the number of failed items in 10 batches of 100 at
// rate 0.3, seed 42.
const itemErrorsSeed42 = 285

// TestItemErrorRateSparesOtherBodies checks that a body that is not a
// batch is echoed whatever the item error rate.
func TestItemErrorRateSparesOtherBodies(t *testing.T) {
	h := newHandler(t, testserver.Config{ItemErrorRate: 1})
	for _, body := range []string{`{"a":1}`, "x", `[1,`} {
		if r := serve(h, "POST", "/api", body); r.status != http.StatusOK || r.body != body {
			t.Errorf("body %q: got %d %q, want 200 echoing it", body, r.status, r.body)
		}
	}
	if s := h.Stats(); s.Items != 3 || s.ItemErrors != 0 {
		t.Errorf("Stats(): got items %d item_errors %d, want 3 0", s.Items, s.ItemErrors)
	}
}

// TestBatchIsOneRequest checks that outages, the body limit, the quota and
// ErrorRate answer a batch as a whole, and that only a 200's items count.
func TestBatchIsOneRequest(t *testing.T) {
	const batch = `[{"tokens":2},{"tokens":3},{}]` // cost 6 with CostField
	for _, tc := range []struct {
		name      string
		cfg       testserver.Config
		setup     func(h *testserver.Handler)
		want      []int // statuses of batch sent len(want) times
		wantStats testserver.Stats
	}{
		{
			name:      "a batch costs 1 with no cost configured",
			cfg:       testserver.Config{Quota: 2, Mode: testserver.FixedWindow},
			want:      []int{200, 200, 429},
			wantStats: testserver.Stats{Accepted: 2, Rejected: 1, AcceptedCost: 2, RejectedCost: 1, Items: 6},
		},
		{
			name:      "a batch costs the sum of its items",
			cfg:       testserver.Config{Quota: 13, Mode: testserver.FixedWindow, CostField: "tokens"},
			want:      []int{200, 200, 429},
			wantStats: testserver.Stats{Accepted: 2, Rejected: 1, AcceptedCost: 12, RejectedCost: 6, Items: 6},
		},
		{
			name:      "a batch that can never fit",
			cfg:       testserver.Config{Quota: 5, Mode: testserver.FixedWindow, CostField: "tokens"},
			want:      []int{413},
			wantStats: testserver.Stats{CostTooLarge: 1},
		},
		{
			name:      "the body limit",
			cfg:       testserver.Config{MaxBodyBytes: 10, CostField: "tokens"},
			want:      []int{413},
			wantStats: testserver.Stats{TooLarge: 1},
		},
		{
			name:      "an outage",
			cfg:       testserver.Config{CostField: "tokens"},
			setup:     func(h *testserver.Handler) { h.SetOutage(503) },
			want:      []int{503},
			wantStats: testserver.Stats{Rejected: 1, RejectedCost: 6},
		},
		{
			name:      "ErrorRate fails the whole batch",
			cfg:       testserver.Config{ErrorRate: 1, ItemErrorRate: 1, CostField: "tokens"},
			want:      []int{500},
			wantStats: testserver.Stats{Errors: 1, ErrorCost: 6},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Now = newFakeClock().Now
			h := newHandler(t, tc.cfg)
			if tc.setup != nil {
				tc.setup(h)
			}
			var got []int
			for range tc.want {
				r := serve(h, "POST", "/api", batch)
				got = append(got, r.status)
				if r.status != http.StatusOK && (strings.HasPrefix(r.body, "[") || r.header.Get("Content-Type") == "application/json") {
					t.Errorf("%d answer: got %q of type %q, want a plain message", r.status, r.body, r.header.Get("Content-Type"))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("statuses: got %v, want %v", got, tc.want)
			}
			s := h.Stats()
			counts := testserver.Stats{
				Accepted: s.Accepted, Rejected: s.Rejected, Errors: s.Errors, TooLarge: s.TooLarge, CostTooLarge: s.CostTooLarge,
				AcceptedCost: s.AcceptedCost, RejectedCost: s.RejectedCost, ErrorCost: s.ErrorCost, Items: s.Items, ItemErrors: s.ItemErrors,
			}
			if diff := cmp.Diff(tc.wantStats, counts); diff != "" {
				t.Errorf("Stats() counts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
