package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/beamthrottle/beamthrottle/internal/services"
	"github.com/beamthrottle/beamthrottle/pipeline"
)

// TestSharedQuotaAcrossProcesses: three pipeline processes, each on its own
// Prism, share one quota in a real Redis. The quota is 50 a day, so the
// verdict does not depend on the machine's speed: exactly 50 of their 120
// elements succeed in all, and each process accounts for every one of its
// elements (the rest wait out --max_wait).
func TestSharedQuotaAcrossProcesses(t *testing.T) {
	const procs, n, quota = 3, 40, 50
	bin := buildBinary(t)
	rd := services.StartRedis(t)
	out := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, procs)
	logs := make([][]byte, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, fmt.Sprintf("--generate=%d", n), "--caller=echo", "--groups=2",
				"--quota_backend=redis", "--quota_address="+rd.Addr, fmt.Sprintf("--quota_rate=%d/24h", quota),
				fmt.Sprintf("--quota_burst=%d", quota), "--quota_key=across-processes", "--max_wait=5s",
				fmt.Sprintf("--output_prefix=%s/p%d/", out, p))
			logs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	success := 0
	for p := range procs {
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
	if success != quota {
		t.Errorf("%d successes across %d processes, want the quota's %d", success, procs, quota)
	}
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
