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
// make test): every element is accounted for. Its verdict rests on counts
// only: whether the heap stays flat and goroutines do not leak depends on
// how fast the machine keeps up (a machine that falls behind buffers more),
// so those are checked by make soak (cmd/loadtest, ten minutes), not here;
// the report below still shows them.
func TestSoak(t *testing.T) {
	const rate, quota = 200, 100
	warmup := *soakFor / 4
	r, err := Soak(context.Background(), SoakConfig{Duration: *soakFor, Rate: rate, Quota: quota, Warmup: warmup, Prefix: TempPrefix("soak")})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + r.Report("soak"))
	if !r.Accounted() {
		t.Errorf("%d generated, %d accounted for", r.Summary.Generated, r.Summary.Total())
	}
	// The generator emits a fixed number of ticks, however slow the run.
	if want := int64(rate * soakFor.Seconds()); r.Summary.Generated != want {
		t.Errorf("generated %d, want %d", r.Summary.Generated, want)
	}
	if r.Server.Accepted == 0 || r.Server.Accepted != r.Summary.Success {
		t.Errorf("server accepted %d, success %d: want equal and > 0", r.Server.Accepted, r.Summary.Success)
	}
	if out := os.Getenv("LOADTEST_REPORT"); out != "" {
		os.WriteFile(out, []byte(r.Report("soak")), 0o644)
	}
}
