package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestKilledWithCallsInFlight kills the binary with SIGKILL while 500
// calls to a slow API are under way (each answered 10 s late), then starts
// it again on the same subscription: every message reaches exactly one
// output, and the calls repeated are no more than the 500 that were under
// way, as the server's own count shows.
func TestKilledWithCallsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := buildBinary(t)

	var skew atomic.Int64
	ps := pstest.NewServerWithAddress("127.0.0.1:0")
	defer ps.Close()
	ps.SetTimeNowFunc(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	ctx := context.Background()
	const project, n, inFlight = "inflight-kill", 1000, 500
	if err := pubsubadmin.CreateTopic(ctx, project, "in", ps.Addr); err != nil {
		t.Fatal(err)
	}
	if err := pubsubadmin.CreateSubscription(ctx, project, "in", "in-sub", ps.Addr); err != nil {
		t.Fatal(err)
	}
	var msgs []pubsubio.Message
	for i := range n {
		msgs = append(msgs, pubsubio.Message{Data: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	if _, err := pubsubadmin.PublishMessages(ctx, project, "in", ps.Addr, msgs); err != nil {
		t.Fatal(err)
	}
	srv, err := testserver.NewServer(testserver.Config{Latency: 10 * time.Second, MaxConns: 4 * inFlight})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := t.TempDir()
	args := func(run string, extra ...string) []string {
		return append([]string{
			"--subscription=in-sub", "--pubsub_project=" + project, "--pubsub_emulator=" + ps.Addr,
			"--url=" + srv.Endpoint(), "--output_prefix=" + filepath.Join(out, run) + "/",
			"--groups=1", "--batch_size=500", "--batch_interval=100ms", fmt.Sprintf("--calls_in_flight=%d", inFlight),
			"--throttle_mode=sre",
		}, extra...)
	}

	first := exec.Command(bin, args("run1")...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for srv.Handler.Stats().Accepted < inFlight {
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatalf("first run had %d calls under way after 60 s, want %d", srv.Handler.Stats().Accepted, inFlight)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	killedAt := srv.Handler.Stats().Accepted

	// Let every lease of the dead process expire; answer at once now.
	skew.Store(int64(2 * time.Minute))
	srv.Handler.SetLatency(0, 0)
	// The dead run's leases expire by the skewed clock, but pstest hands the
	// messages out again only on its next sweep: a quiet of 3 s ended the
	// second run before it on a loaded machine.
	second := exec.Command(bin, args("run2", "--idle_timeout=10s")...)
	if b, err := second.CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, tail(b))
	}

	seen := outputInputs(t, out, "run1", "run2")
	for _, m := range msgs {
		if c := seen[string(m.Data)]; c != 1 {
			t.Errorf("message %s reached %d outputs, want 1", m.Data, c)
		}
	}
	left, err := pubsubadmin.Drain(ctx, project, "in-sub", ps.Addr)
	if err != nil || len(left) != 0 {
		t.Errorf("subscription not empty after the second run: %d left, %v", len(left), err)
	}
	calls := srv.Handler.Stats().Accepted
	if repeated := calls - n; repeated < 0 || repeated > killedAt {
		t.Errorf("%d calls for %d messages: %d repeated, want at most the %d under way when killed", calls, n, repeated, killedAt)
	}
	t.Logf("killed with %d calls under way; %d calls in all for %d messages", killedAt, calls, n)
}
