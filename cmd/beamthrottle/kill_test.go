package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestKilledMidRunLosesNothing runs the real binary as a separate process
// reading a Pub/Sub subscription (the emulator stays in this process), kills
// it with SIGKILL in the middle of the run, and starts it again in drain
// mode. Messages that were not acknowledged when the process died are
// delivered again once their lease expires, so every message reaches an
// output at least once and the subscription ends empty.
func TestKilledMidRunLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := buildBinary(t)

	var skew atomic.Int64
	ps := pstest.NewServerWithAddress("127.0.0.1:0")
	defer ps.Close()
	ps.SetTimeNowFunc(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	ctx := context.Background()
	const project, n = "kill-test", 300
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
	// A slow backend keeps the first run busy long enough to be killed.
	srv, err := testserver.NewServer(testserver.Config{Latency: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	// Both runs send on time slots of a quota in Redis: the slots the
	// killed process held lapse, and the second run goes on with its own.
	rd := services.StartRedis(t)
	out := t.TempDir()
	args := func(run string, extra ...string) []string {
		return append([]string{
			"--subscription=in-sub", "--pubsub_project=" + project, "--pubsub_emulator=" + ps.Addr,
			"--url=" + srv.Endpoint(), "--output_prefix=" + filepath.Join(out, run) + "/",
			"--groups=1", "--batch_size=10", "--batch_interval=100ms",
			"--quota_backend=redis", "--quota_address=" + rd.Addr, "--quota_key=kill-test", "--quota_rate=200/s",
		}, extra...)
	}

	first := exec.Command(bin, args("run1")...)
	first.Stdout, first.Stderr = nil, nil
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for srv.Handler.Stats().Accepted < 50 {
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatalf("first run made %d calls in 60 s", srv.Handler.Stats().Accepted)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	killedAt := srv.Handler.Stats().Accepted
	if killedAt >= n {
		t.Fatalf("the first run finished all %d calls before it was killed", n)
	}

	// Let every lease of the dead process expire, then drain.
	skew.Store(int64(2 * time.Minute)) // past the 60 s lease, within pstest's 10-minute retention
	second := exec.Command(bin, args("run2", "--idle_timeout=3s")...)
	if b, err := second.CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, tail(b))
	}

	seen := outputInputs(t, out, "run1", "run2")
	for _, m := range msgs {
		if seen[string(m.Data)] == 0 {
			t.Errorf("message %s reached no output", m.Data)
		}
	}
	left, err := pubsubadmin.Drain(ctx, project, "in-sub", ps.Addr)
	if err != nil || len(left) != 0 {
		t.Errorf("subscription not empty after the second run: %d left, %v", len(left), err)
	}
	t.Logf("killed after %d calls; %d distinct payloads in the outputs, %d server calls in all", killedAt, len(seen), srv.Handler.Stats().Accepted)
}

// built is the beamthrottle binary the tests run, built once (buildBinary)
// into a directory TestMain removes.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildBinary builds the beamthrottle binary, once for all the tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "beamthrottle-test-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "beamthrottle")
		if out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func tail(b []byte) []byte {
	if len(b) > 4000 {
		return b[len(b)-4000:]
	}
	return b
}

// outputInputs counts, by input payload, the lines of every JSONL output
// file the given runs wrote under out/run/.
func outputInputs(t *testing.T, out string, runs ...string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, run := range runs {
		files, _ := filepath.Glob(filepath.Join(out, run, "*.jsonl"))
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(fh)
			for sc.Scan() {
				var l struct{ Input string }
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				seen[l.Input]++
			}
			fh.Close()
		}
	}
	return seen
}
