package pipeline

import (
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestQuotaServiceHangs: --quota_address names a server that accepts
// connections and never answers (a hung Redis). Failing open, every element
// succeeds against the quota server at the throttle's pace, and the
// service is asked a few times: once, then once per back-off of its
// breaker (1, 2, 4, 8, 10 s...), not once per call. The Redis client opens
// a connection per round trip to a server that does not answer, so the
// server's count of connections counts them.
func TestQuotaServiceHangs(t *testing.T) {
	const n = 100
	srv, err := testserver.NewServer(testserver.Config{Quota: 100000, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hung := services.StartSilent(t)
	o := baseOptions(t)
	o.Generate = n
	o.CallerOptions.URL = srv.Endpoint()
	o.QuotaBackend, o.QuotaAddr, o.QuotaRate = "redis", hung.Addr, "1000/s"
	o.QuotaFail, o.QuotaTimeout = "open", 100*time.Millisecond
	sum := run(t, o)
	if sum.Success != n || sum.Total() != n {
		t.Errorf("summary %+v, want all %d elements successes", sum, n)
	}
	// 20 round trips would take the run 2 minutes.
	if got := hung.Accepted(); got < 1 || got > n/5 {
		t.Errorf("the hung service was asked %d times, want a few (1 to %d), one per back-off", got, n/5)
	}
	t.Logf("summary %+v; the hung service was asked %d times", sum, hung.Accepted())
}
