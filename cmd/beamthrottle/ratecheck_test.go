package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestQuotaRateMismatchRefused: a job on --quota_key=shared at 5/s records
// the key's rate in Redis; a second job on the same key at 20/s is refused
// at start, with one line naming --quota_rate and both rates, and sends
// nothing; a job at 300/m (the same rate) and a job on another key run.
func TestQuotaRateMismatchRefused(t *testing.T) {
	bin := buildBinary(t)
	rd := services.StartRedis(t)
	srv, err := testserver.NewServer(testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	job := func(key, rate string) ([]byte, error) {
		return exec.Command(bin, "--generate=3", "--url="+srv.Endpoint(), "--output_prefix="+t.TempDir()+"/",
			"--quota_backend=redis", "--quota_address="+rd.Addr, "--quota_key="+key, "--quota_rate="+rate).CombinedOutput()
	}
	if out, err := job("shared", "5/s"); err != nil {
		t.Fatalf("the first job: %v\n%s", err, tail(out))
	}
	calls := srv.Handler.Stats().Accepted
	out, err := job("shared", "20/s")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitError {
		t.Fatalf("a job at 20/s on a key at 5/s: %v, want exit status %d\n%s", err, exitError, tail(out))
	}
	text := strings.TrimSpace(string(out))
	if strings.Contains(text, "\n") || !strings.HasPrefix(text, "beamthrottle: --quota_rate: ") ||
		!strings.Contains(text, "5/s") || !strings.Contains(text, "20/s") {
		t.Errorf("output\n%s\nwant one line naming --quota_rate, 5/s and 20/s", text)
	}
	if got := srv.Handler.Stats().Accepted; got != calls {
		t.Errorf("the refused job made %d calls, want none", got-calls)
	}
	for _, tc := range []struct{ key, rate string }{{"shared", "300/m"}, {"another", "20/s"}} {
		if out, err := job(tc.key, tc.rate); err != nil {
			t.Errorf("a job on %s at %s: %v, want it to run\n%s", tc.key, tc.rate, err, tail(out))
		}
	}
}
