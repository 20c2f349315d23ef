// Built without -race: it cancels a running streaming job, which trips a
// data race inside Beam Go v2.77.0 itself (see pubsubio's
// read_streaming_test.go).

//go:build !race

package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

// TestStreamingAcksOnlyWrittenLines reads a subscription as a streaming job
// (no idle timeout, so the job never ends by itself) and watches it: the
// file sinks must finalise files while the job runs (or no message is ever
// acknowledged), and a message may be acknowledged only once its line is in
// a file in place. Each look takes the acknowledged messages first and
// reads the files after, so a message acknowledged before its file was
// renamed into place shows as acknowledged but missing.
func TestStreamingAcksOnlyWrittenLines(t *testing.T) {
	const n = 200
	tests := []struct {
		name   string
		caller string
	}{
		{"success", "echo"},
		{"throttled", "always429"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := emulator(t, "in")
			var msgs []pubsubio.Message
			for i := range n {
				msgs = append(msgs, pubsubio.Message{Data: fmt.Appendf(nil, `{"n":%d}`, i)})
			}
			if _, err := pubsubadmin.PublishMessages(context.Background(), project, "in", ps.Addr, msgs); err != nil {
				t.Fatal(err)
			}
			o := baseOptions(t)
			o.Caller = tt.caller
			o.Subscription, o.PubSubHost = "in-sub", ps.Addr
			o.FlushInterval = 300 * time.Millisecond
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, o, nil)
				done <- err
			}()

			timeout := time.After(90 * time.Second)
			var acked, written map[string]bool
			for looks := 0; ; looks++ {
				acked = ackedPayloads(ps, "in")
				written = writtenInputs(t, o.OutputPrefix)
				for p := range acked {
					if !written[p] {
						t.Fatalf("message %s acknowledged before its line was in a file in place (look %d)", p, looks)
					}
				}
				if len(acked) == n {
					t.Logf("all %d acknowledged while the job ran, after %d looks", n, looks)
					break
				}
				select {
				case err := <-done:
					t.Fatalf("streaming job ended before it was cancelled: %v", err)
				case <-timeout:
					t.Fatalf("%d of %d messages acknowledged and %d written before the timeout", len(acked), n, len(written))
				case <-time.After(20 * time.Millisecond):
				}
			}
			cancel()
			select {
			case err := <-done:
				t.Logf("job ended after cancel: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("streaming job did not end after its context was cancelled")
			}
			for _, m := range msgs {
				if !written[string(m.Data)] {
					t.Errorf("message %s is in no output file", m.Data)
				}
			}
		})
	}
}

// ackedPayloads returns the payloads of the acknowledged messages of topic.
func ackedPayloads(ps *pstest.Server, topic string) map[string]bool {
	out := map[string]bool{}
	for _, m := range ps.Messages() {
		if m.Topic == "projects/"+project+"/topics/"+topic && m.Acks > 0 {
			out[string(m.Data)] = true
		}
	}
	return out
}

// writtenInputs returns the inputs of the lines of every output file in
// place under prefix (not the temporary ones being written).
func writtenInputs(t *testing.T, prefix string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(prefix + "*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
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
			out[l.Input] = true
		}
		fh.Close()
	}
	return out
}
