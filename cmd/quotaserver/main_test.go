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

func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outR, outW := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"--addr", "127.0.0.1:0", "--quota", "2", "--period", "1m", "--log-level", "warn"}, outW, io.Discard)
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
	for range 3 {
		res, err := http.Post(api, "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		statuses = append(statuses, res.StatusCode)
	}
	if want := []int{200, 200, 429}; !slices.Equal(statuses, want) {
		t.Errorf("API statuses: got %v, want %v", statuses, want)
	}

	res, err := http.Get(url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Accepted, Rejected int64
		Quota              int
		Period             string
	}
	err = json.NewDecoder(res.Body).Decode(&stats)
	res.Body.Close()
	if err != nil {
		t.Fatalf("GET /stats: %v", err)
	}
	if stats.Accepted != 2 || stats.Rejected != 1 || stats.Quota != 2 || stats.Period != "1m0s" {
		t.Errorf("GET /stats: got %+v, want accepted 2, rejected 1, quota 2, period 1m0s", stats)
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
		{[]string{"--refill=-1s"}, "--refill"},
		{[]string{"--latency=-1ms"}, "--latency"},
		{[]string{"--jitter=-1ms"}, "--jitter"},
		{[]string{"--error-rate=1.5"}, "--error-rate"},
		{[]string{"--error-rate=NaN"}, "--error-rate"},
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
	for _, name := range []string{"-addr", "-quota", "-period", "-mode", "-refill", "-latency", "-jitter", "-error-rate", "-max-body", "-max-conns", "-log-level"} {
		if !strings.Contains(stderr.String(), name) {
			t.Errorf("usage does not mention %s:\n%s", name, stderr.String())
		}
	}
}
