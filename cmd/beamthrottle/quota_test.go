package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestSharedQuotaAcrossProcesses: three pipeline processes, each on its own
// Prism, share one quota, kept by a real Redis (GCRA) or by Envoy's real
// rate-limit service. The quota is 50 a day, so the verdict does not depend
// on the machine's speed: exactly 50 of their 120 elements succeed in all,
// and each process accounts for every one of its elements (the rest wait
// out --max_wait).
func TestSharedQuotaAcrossProcesses(t *testing.T) {
	const procs, n, quota = 3, 40, 50
	bin := buildBinary(t)
	tests := []struct {
		name  string
		flags func(t *testing.T) []string
	}{
		{"redis", func(t *testing.T) []string {
			rd := services.StartRedis(t)
			return []string{"--quota_backend=redis", "--quota_address=" + rd.Addr,
				fmt.Sprintf("--quota_rate=%d/24h", quota), fmt.Sprintf("--quota_burst=%d", quota)}
		}},
		{"envoy", func(t *testing.T) []string {
			// testdata/ratelimit/config: key=<--quota_key>, 50 a day. The
			// service's day ends at midnight UTC: stay clear of it.
			if left := time.Until(time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)); left < 2*time.Minute {
				t.Logf("waiting %v for the service's day window to end", left)
				time.Sleep(left + time.Second)
			}
			rl := services.StartRateLimit(t, services.StartRedis(t).Addr, services.RateLimitConfig(t))
			return []string{"--quota_backend=envoy", "--quota_address=" + rl.Addr, "--quota_domain=beamthrottle"}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			flags := tc.flags(t)
			out := t.TempDir()
			success := runProcesses(t, bin, procs, out, n, append([]string{"--caller=echo", "--groups=2",
				"--quota_key=across-processes", "--max_wait=5s"}, flags...)...)
			if success != quota {
				t.Errorf("%d successes across %d processes, want the quota's %d", success, procs, quota)
			}
		})
	}
}

// TestSlotsAcrossProcesses: three pipeline processes, each on its own
// Prism, send on time slots of one quota kept in a real Redis, against the
// quota server as a strict limiter (a GCRA with no burst), the quota at
// 90 % of the server's rate. Counts only, whatever the machine's speed:
// each process accounts for every one of its elements in exactly one
// output, and the server accepted exactly as many calls as the processes
// count successes (a call refused is retried, postponed or routed, never
// counted twice).
func TestSlotsAcrossProcesses(t *testing.T) {
	const procs, n = 3, 30
	bin := buildBinary(t)
	rd := services.StartRedis(t)
	srv, err := testserver.NewServer(testserver.Config{Quota: 20, Period: time.Second, Mode: testserver.GCRA})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := t.TempDir()
	success := runProcesses(t, bin, procs, out, n, "--url="+srv.Endpoint(), "--quota_backend=redis",
		"--quota_address="+rd.Addr, "--quota_key=slots-across-processes", "--quota_rate=18/s", "--max_wait=2m")
	st := srv.Handler.Stats()
	if int(st.Accepted) != success {
		t.Errorf("the server accepted %d calls, the processes count %d successes", st.Accepted, success)
	}
	if success == 0 {
		t.Error("no element succeeded")
	}
	t.Logf("%d successes, %d calls refused by the server", success, st.Rejected)
}

// TestSlotsAgainstNginx runs three binaries on one quota of Redis time
// slots against Debian's nginx, limit_req at 10 r/s with no burst (a strict
// limiter written by others, counting in milliseconds of a cached clock):
// every element ends in exactly one output, nginx admitted exactly the
// successes, and it refused at most 2 % of the calls. The quota is 80 % of
// nginx's rate, so that the slots are 25 ms wider than nginx needs: wide
// enough for two busy cores' late timers (make quotabench's nginx rows
// measure 90 %, 11 ms).
func TestSlotsAgainstNginx(t *testing.T) {
	const procs, n = 3, 80
	bin := buildBinary(t)
	rd := services.StartRedis(t)
	ngx := services.StartNginx(t, 10)
	success := runProcesses(t, bin, procs, t.TempDir(), n, "--url="+ngx.URL, "--quota_backend=redis",
		"--quota_address="+rd.Addr, "--quota_key=slots-against-nginx", "--quota_rate=8/s")
	reqs, err := ngx.Log()
	if err != nil {
		t.Fatal(err)
	}
	var admitted, refused int
	for _, r := range reqs {
		switch r.Status {
		case 200:
			admitted++
		case 429:
			refused++
		default:
			t.Errorf("nginx answered %d at %v", r.Status, r.At)
		}
	}
	if admitted != success || success != procs*n {
		t.Errorf("nginx admitted %d calls, the processes count %d successes, want %d", admitted, success, procs*n)
	}
	if calls := admitted + refused; refused*50 > calls {
		t.Errorf("nginx refused %d of %d calls, want at most 2 %%", refused, calls)
	}
	t.Logf("%d successes, %d calls refused by nginx", success, refused)
}

// runProcesses runs procs copies of the binary bin at once, each
// generating n elements with flags and writing under out/p<p>/, checks
// that each ended well and wrote one line in its outputs for each of its
// elements, and returns how many succeeded in all.
func runProcesses(t *testing.T, bin string, procs int, out string, n int, flags ...string) (success int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, procs)
	logs := make([][]byte, procs)
	for p := range procs {
		wg.Go(func() {
			args := append([]string{fmt.Sprintf("--generate=%d", n), fmt.Sprintf("--output_prefix=%s/p%d/", out, p)}, flags...)
			logs[p], errs[p] = exec.Command(bin, args...).CombinedOutput()
		})
	}
	wg.Wait()
	for p := range errs {
		if errs[p] != nil {
			t.Fatalf("process %d: %v\n%s", p, errs[p], tail(logs[p]))
		}
		all := 0
		for _, outcome := range []string{pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled, pipeline.OutErrors} {
			k := countLines(t, filepath.Join(out, fmt.Sprintf("p%d", p), outcome+"-*.jsonl"))
			all += k
			if outcome == pipeline.OutSuccess {
				success += k
			}
		}
		if all != n {
			t.Errorf("process %d: %d lines in its outputs, want its %d elements", p, all, n)
		}
	}
	return success
}

// countLines counts the lines of the files matching glob.
func countLines(t *testing.T, glob string) int {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			n++
		}
		fh.Close()
	}
	return n
}
