package loadtest

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

var soakFor = flag.Duration("soak", time.Minute, "length of TestSoak (make soak runs 10 minutes)")

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, "prism")
}

// TestSoak streams elements at twice the quota for -soak (one minute in
// make test): every element is accounted for, the heap does not keep
// growing after warm-up and goroutines do not leak.
func TestSoak(t *testing.T) {
	const rate, quota = 200, 100
	warmup := *soakFor / 4
	r, err := Soak(context.Background(), *soakFor, rate, quota, warmup, TempPrefix("soak"))
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + r.Report("soak"))
	if !r.Accounted() {
		t.Errorf("%d generated, %d accounted for", r.Summary.Generated, r.Summary.Total())
	}
	if want := int64(rate * soakFor.Seconds()); r.Summary.Generated < want*9/10 {
		t.Errorf("generated %d, want about %d", r.Summary.Generated, want)
	}
	// Loose bounds: a leak of the buffered data would grow the heap by
	// tens of MB per minute at this rate.
	if r.SlopeMB > 20 {
		t.Errorf("heap grows %.1f MB/min after warm-up", r.SlopeMB)
	}
	if r.GoEnd > r.GoStart+50 {
		t.Errorf("goroutines grew from %d to %d", r.GoStart, r.GoEnd)
	}
	if r.Server.Accepted == 0 || r.Server.Rejected+r.Summary.ClientThrottled == 0 {
		t.Errorf("at twice the quota want accepted calls and throttling, got server %+v", r.Server)
	}
	if out := os.Getenv("LOADTEST_REPORT"); out != "" {
		os.WriteFile(out, []byte(r.Report("soak")), 0o644)
	}
}
