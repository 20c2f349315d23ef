package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// serverStats is the part of GET /stats these tests check.
type serverStats struct {
	Accepted, Rejected int64
	AcceptedCost       int64 `json:"accepted_cost"`
	RejectedCost       int64 `json:"rejected_cost"`
	CostTooLarge       int64 `json:"cost_too_large"`
	Items              int64 `json:"items"`
	ItemErrors         int64 `json:"item_errors"`
	Quota              int
	Period             string
	Mode               string
	Burst              int
	WindowJitter       string `json:"window_jitter"`
	CostHeader         string `json:"cost_header"`
	CostField          string `json:"cost_field"`
}

// apiRequest is the API request runAndCheck sends: body, and a value of
// the X-Cost header unless cost is "".
type apiRequest struct {
	body, cost string
}

func TestRunServesAndShutsDown(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		req       apiRequest // "x" if zero
		want      []int      // statuses of back-to-back API requests
		wantStats serverStats
	}{
		{
			name:      "token bucket",
			args:      []string{"--quota", "2", "--period", "1m"},
			want:      []int{200, 200, 429},
			wantStats: serverStats{Accepted: 2, Rejected: 1, AcceptedCost: 2, RejectedCost: 1, Items: 2, Quota: 2, Period: "1m0s", Mode: "token-bucket"},
		},
		{
			name:      "gcra no burst",
			args:      []string{"--quota", "1", "--period", "1m", "--mode", "gcra"},
			want:      []int{200, 429, 429},
			wantStats: serverStats{Accepted: 1, Rejected: 2, AcceptedCost: 1, RejectedCost: 2, Items: 1, Quota: 1, Period: "1m0s", Mode: "gcra", Burst: 1},
		},
		{
			name:      "gcra burst",
			args:      []string{"--quota", "1", "--period", "1m", "--mode", "gcra", "--burst", "3"},
			want:      []int{200, 200, 200, 429},
			wantStats: serverStats{Accepted: 3, Rejected: 1, AcceptedCost: 3, RejectedCost: 1, Items: 3, Quota: 1, Period: "1m0s", Mode: "gcra", Burst: 3},
		},
		{
			// With seed 1, the first window ends 55 minutes after the start.
			name:      "drifting fixed window",
			args:      []string{"--quota", "2", "--period", "1h", "--mode", "fixed-window", "--window-jitter", "10m", "--seed", "1"},
			want:      []int{200, 200, 429},
			wantStats: serverStats{Accepted: 2, Rejected: 1, AcceptedCost: 2, RejectedCost: 1, Items: 2, Quota: 2, Period: "1h0m0s", Mode: "fixed-window", WindowJitter: "10m0s"},
		},
		{
			name: "cost field, batches and item errors",
			args: []string{"--quota", "10", "--period", "1m", "--mode", "fixed-window", "--cost-field", "tokens", "--item-error-rate", "1"},
			req:  apiRequest{body: `[{"tokens":4},{"tokens":2}]`},
			want: []int{200, 429},
			wantStats: serverStats{
				Accepted: 1, Rejected: 1, AcceptedCost: 6, RejectedCost: 6, Items: 2, ItemErrors: 2,
				Quota: 10, Period: "1m0s", Mode: "fixed-window", CostField: "tokens",
			},
		},
		{
			name: "cost header",
			args: []string{"--quota", "10", "--period", "1m", "--cost-header", "X-Cost"},
			req:  apiRequest{body: "x", cost: "11"},
			want: []int{413, 413},
			wantStats: serverStats{
				CostTooLarge: 2, Quota: 10, Period: "1m0s", Mode: "token-bucket", CostHeader: "X-Cost",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req == (apiRequest{}) {
				tc.req.body = "x"
			}
			runAndCheck(t, tc.args, tc.req, tc.want, tc.wantStats)
		})
	}
}

// runAndCheck runs the server with args, sends req len(want) times one
// after another, checks the statuses and GET /stats, then cancels and
// checks the server shuts down.
func runAndCheck(t *testing.T, args []string, req apiRequest, want []int, wantStats serverStats) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn"}, args...), outW, io.Discard)
		outW.Close()
	}()

	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL line: %v (run: %v)", err, <-errc)
	}
	go io.Copy(io.Discard, outR)
	m := regexp.MustCompile(`^quotaserver listening on (http://127\.0\.0\.1:\d+) \(API (\S+)\)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("stdout: got %q, want the URL and API endpoint", line)
	}
	url, api := m[1], m[2]
	if want := url + "/api"; api != want {
		t.Errorf("API endpoint: got %q, want %q", api, want)
	}

	var statuses []int
	for range want {
		r, err := http.NewRequest("POST", api, strings.NewReader(req.body))
		if err != nil {
			t.Fatal(err)
		}
		if req.cost != "" {
			r.Header.Set("X-Cost", req.cost)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		statuses = append(statuses, res.StatusCode)
	}
	if !slices.Equal(statuses, want) {
		t.Errorf("API statuses: got %v, want %v", statuses, want)
	}

	res, err := http.Get(url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var stats serverStats
	err = json.NewDecoder(res.Body).Decode(&stats)
	res.Body.Close()
	if err != nil {
		t.Fatalf("GET /stats: %v", err)
	}
	if stats != wantStats {
		t.Errorf("GET /stats: got %+v, want %+v", stats, wantStats)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("run after cancel: got %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Errorf("GET after shutdown: got nil error, want one")
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error message
	}{
		{[]string{"--quota=-1"}, "--quota"},
		{[]string{"--quota=lots"}, "-quota"},
		{[]string{"--period=0s"}, "--period"},
		{[]string{"--period=-1s"}, "--period"},
		{[]string{"--mode=leaky"}, "--mode"},
		{[]string{"--mode=gcra", "--burst=-1"}, "--burst"},
		{[]string{"--burst=10"}, "--burst"}, // token bucket: its burst is --quota
		{[]string{"--mode=fixed-window", "--burst=1"}, "--burst"},
		{[]string{"--mode=fixed-window", "--window-jitter=-1s"}, "--window-jitter"},
		{[]string{"--window-jitter=1s"}, "--window-jitter"}, // token bucket
		{[]string{"--mode=gcra", "--window-jitter=1s"}, "--window-jitter"},
		{[]string{"--mode=fixed-window", "--period=2562047h", "--window-jitter=1h"}, "WindowJitter"},
		{[]string{"--refill=-1s"}, "--refill"},
		{[]string{"--latency=-1ms"}, "--latency"},
		{[]string{"--jitter=-1ms"}, "--jitter"},
		{[]string{"--latency-p99=1s"}, "--latency-p99"},
		{[]string{"--latency=2s", "--latency-p99=1s"}, "--latency-p99"},
		{[]string{"--mode=queue", "--quota=0"}, "Quota"},
		{[]string{"--advertise=ratelimit"}, "--advertise"},
		{[]string{"--advertise-quota=5"}, "--advertise-quota"},
		{[]string{"--advertise=ietf", "--advertise-quota=-1"}, "--advertise-quota"},
		{[]string{"--error-rate=1.5"}, "--error-rate"},
		{[]string{"--error-rate=NaN"}, "--error-rate"},
		{[]string{"--item-error-rate=1.5"}, "--item-error-rate"},
		{[]string{"--item-error-rate=-0.1"}, "--item-error-rate"},
		{[]string{"--item-error-rate=NaN"}, "--item-error-rate"},
		{[]string{"--item-error-rate=half"}, "-item-error-rate"},
		{[]string{"--cost-header=X Cost"}, "--cost-header"},
		{[]string{"--cost-header=X-Cost:"}, "--cost-header"},
		{[]string{"--max-body=0"}, "--max-body"},
		{[]string{"--max-conns=-1"}, "--max-conns"},
		{[]string{"--shutdown-timeout=0s"}, "--shutdown-timeout"},
		{[]string{"--log-level=loud"}, "--log-level"},
		{[]string{"--bogus"}, "bogus"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"--quota=4611686018427387904", "--period=1h"}, "quota"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := run(context.Background(), append([]string{"--addr=127.0.0.1:0"}, tc.args...), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: got error %v, want one naming %q", err, tc.want)
			}
			if got, want := exitCode(err), 2; got != want {
				t.Errorf("exitCode(%v): got %d, want %d", err, got, want)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{flag.ErrHelp, 0},
		{&usageError{"bad"}, 2},
		{errors.New("listen: address in use"), 1},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v): got %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestRunListenError(t *testing.T) {
	err := run(context.Background(), []string{"--addr=127.0.0.1:notaport"}, io.Discard, io.Discard)
	if got, want := exitCode(err), 1; got != want {
		t.Errorf("exitCode(%v): got %d, want %d", err, got, want)
	}
}

func TestRunHelp(t *testing.T) {
	var stderr strings.Builder
	err := run(context.Background(), []string{"-h"}, io.Discard, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("run -h: got %v, want flag.ErrHelp", err)
	}
	for _, name := range []string{"-addr", "-quota", "-period", "-mode", "gcra", "-burst", "-window-jitter", "-refill", "-latency", "-jitter", "-error-rate", "-item-error-rate", "-cost-header", "-cost-field", "-max-body", "-max-conns", "-log-level"} {
		if !strings.Contains(stderr.String(), name) {
			t.Errorf("usage does not mention %s:\n%s", name, stderr.String())
		}
	}
}
