package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

// TestReprocessOwnDeadLetters: a reprocessing run whose dead-letter topic
// feeds the subscription it reads gets its own dead letters back. They cycle
// (attempts growing) until they are parked at --max_total_attempts or the
// run stops reading; the summary and the progress count each original
// message once, under its last outcome of the run, and the re-reads apart.
// The assertions hold however many cycles the run completes before it goes
// idle.
func TestReprocessOwnDeadLetters(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, o *Options)
	}{
		{"throttled", func(t *testing.T, o *Options) { o.Caller = "always429" }},
		{"errors dead-lettered", func(t *testing.T, o *Options) {
			o.CallerOptions.URL = jsonAPI(t) // 400: the payloads are not JSON
			o.DeadLetterErrors = true
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := emulator(t, "dlq")
			const n = 20
			var msgs []pubsubio.Message
			for i := range n {
				msgs = append(msgs, pubsubio.Message{
					Data:       []byte(fmt.Sprintf("msg-%d", i)),
					Attributes: map[string]string{AttrAttempts: "1", AttrOutcome: "server_throttled"},
				})
			}
			if _, err := pubsubio.PublishMessages(context.Background(), project, "dlq", ps.Addr, msgs); err != nil {
				t.Fatal(err)
			}
			o := baseOptions(t)
			o.Reprocess = true
			o.Subscription = "dlq-sub"
			o.DeadLetterTopic = "dlq" // the topic o.Subscription reads
			o.IdleTimeout = 2 * time.Second
			o.PubSubHost = ps.Addr
			o.MaxTotalAttempts = 3
			tc.setup(t, &o)
			sum, progress := runCounted(t, o)

			if sum.Reprocessed != n || sum.Total() != n || sum.Success != 0 {
				t.Errorf("summary %+v: want %d messages read and accounted for, none successful", sum, n)
			}
			// Not parked: dead-lettered in the last pass and not read again.
			last := sum.ClientThrottled + sum.ServerThrottled + sum.Errors
			if got := progress[OutClientThrottled] + progress[OutServerThrottled] + progress[OutErrors]; got != last || progress[OutParked] != sum.Parked {
				t.Errorf("progress %v: want %d dead-lettered and %d parked, as the summary", progress, last, sum.Parked)
			}

			// Each message is parked (read three times: attempts 1, 2, 3)
			// or was dead-lettered once more and left for a later run (read
			// attempts-1 times): the topic's messages nobody acknowledged
			// (asked of the emulator, as a message the reader was pulling
			// when it went idle stays leased for a while).
			seen := map[string]int{}
			var reads int64
			parked := readLines(t, o.OutputPrefix, OutParked)
			for _, l := range parked {
				seen[l["input"].(string)]++
				if l["attempts"] != 3.0 {
					t.Errorf("parked line %v: want attempts 3", l)
				}
				reads += 3
			}
			var left []*pstest.Message
			for _, m := range ps.Messages() {
				if m.Acks == 0 {
					left = append(left, m)
				}
			}
			for _, m := range left {
				seen[string(m.Data)]++
				a, err := strconv.Atoi(m.Attributes[AttrAttempts])
				if err != nil || a < 2 || a > 3 {
					t.Errorf("message %q left with attempts %q, want 2 or 3", m.Data, m.Attributes[AttrAttempts])
				}
				reads += int64(a - 1)
			}
			for _, m := range msgs {
				if seen[string(m.Data)] != 1 {
					t.Errorf("message %q parked or left %d times, want once", m.Data, seen[string(m.Data)])
				}
			}
			if int64(len(parked)) != sum.Parked || int64(len(left)) != last {
				t.Errorf("%d parked lines and %d messages left; summary %+v", len(parked), len(left), sum)
			}
			if sum.Reread != reads-n {
				t.Errorf("summary counts %d re-reads, want %d (%d reads of %d messages)", sum.Reread, reads-n, reads, n)
			}
			// The files keep a line per pass.
			var lines int64
			for _, name := range []string{OutClientThrottled, OutServerThrottled, OutErrors} {
				lines += int64(len(readLines(t, o.OutputPrefix, name)))
			}
			if lines != last+sum.Reread {
				t.Errorf("%d throttled and error lines, want %d: one per pass", lines, last+sum.Reread)
			}
			t.Logf("summary %+v", sum)
		})
	}
}
