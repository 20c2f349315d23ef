package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
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
			if _, err := pubsubadmin.PublishMessages(context.Background(), project, "dlq", ps.Addr, msgs); err != nil {
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

// TestReprocessOwnDeadLettersParksAll: every pass through the dead-letter
// topic counts toward --max_total_attempts, even one in which no call was
// made. With the default throttle against an API whose Retry-After (an
// hour) outlasts --max_wait, the elements held for it are client-throttled
// without a call; a reprocessing run that reads its own dead letters still
// parks every message after --max_total_attempts passes, goes idle and
// ends, and every message is counted once.
func TestReprocessOwnDeadLettersParksAll(t *testing.T) {
	const n, maxTotal = 12, 3
	ps := emulator(t, "dlq")
	var msgs []pubsubio.Message
	for i := range n {
		msgs = append(msgs, pubsubio.Message{Data: []byte(fmt.Sprintf(`{"msg":%d}`, i)), Attributes: map[string]string{"custom": "kept"}})
	}
	if _, err := pubsubadmin.PublishMessages(context.Background(), project, "dlq", ps.Addr, msgs); err != nil {
		t.Fatal(err)
	}
	srv := refusingAPI(t, false)
	o := baseOptions(t)
	defaultThrottle(&o)
	o.MaxWait = time.Second
	o.CallerOptions.URL = srv.Endpoint()
	o.Reprocess = true
	o.Subscription = "dlq-sub"
	o.DeadLetterTopic = "dlq" // the topic o.Subscription reads
	// A pass takes well under a second: a message comes back long before
	// the run could go idle.
	o.IdleTimeout = 5 * time.Second
	o.PubSubHost = ps.Addr
	o.MaxTotalAttempts = maxTotal
	sum, p := runBounded(t, o, 2*time.Minute)

	// Read with attempts 0, 1 and 2, dead-lettered each time; read with 3,
	// parked.
	if sum.Reprocessed != n || sum.Parked != n || sum.Total() != n || sum.Reread != maxTotal*n {
		t.Errorf("summary %+v: want %d read, parked and accounted for, and %d re-reads", sum, n, maxTotal*n)
	}
	if got := p.Counts(); got[OutParked] != n {
		t.Errorf("progress %v: want %d parked", got, n)
	}
	parked := readLines(t, o.OutputPrefix, OutParked)
	seen := map[string]bool{}
	for _, l := range parked {
		seen[l["input"].(string)] = true
		attrs, _ := l["attributes"].(map[string]any)
		if l["attempts"] != float64(maxTotal) || attrs["custom"] != "kept" {
			t.Errorf("parked line %v: want attempts %d and the original attributes", l, maxTotal)
		}
	}
	if len(parked) != n || len(seen) != n {
		t.Errorf("%d parked lines for %d messages, want %d", len(parked), len(seen), n)
	}
	if left, err := pubsubadmin.Drain(context.Background(), project, "dlq-sub", ps.Addr); err != nil || len(left) != 0 {
		t.Errorf("dead-letter subscription: %d messages left, %v; want none", len(left), err)
	}
	t.Logf("summary %+v; %d calls", sum, srv.Handler.Stats().Rejected)
}

// TestRedeadLetterKeepsAttributes: a reprocessing run that dead-letters a
// message again keeps the attributes it came with, and its attempts go on
// counting: from the attribute for a throttled message, from this pass for
// one whose attempts attribute was malformed (an error, dead-lettered with
// --dead_letter_errors, the malformed value in its error).
func TestRedeadLetterKeepsAttributes(t *testing.T) {
	ps := emulator(t, "dlq", "dlq2")
	msgs := []pubsubio.Message{
		{Data: []byte("throttled"), Attributes: map[string]string{AttrAttempts: "2", "custom": "kept", AttrStatusCode: "503"}},
		{Data: []byte("malformed"), Attributes: map[string]string{AttrAttempts: "many", "custom": "kept"}},
	}
	if _, err := pubsubadmin.PublishMessages(context.Background(), project, "dlq", ps.Addr, msgs); err != nil {
		t.Fatal(err)
	}
	o := baseOptions(t)
	o.Caller = "always429"
	o.Reprocess = true
	o.Subscription = "dlq-sub"
	o.DeadLetterTopic = "dlq2"
	o.DeadLetterErrors = true
	o.IdleTimeout = time.Second
	o.PubSubHost = ps.Addr
	sum := run(t, o)
	if sum.Reprocessed != 2 || sum.Errors != 1 || sum.ServerThrottled+sum.ClientThrottled != 1 || sum.Total() != 2 {
		t.Errorf("summary %+v: want one error and one throttled of 2", sum)
	}
	out, err := pubsubadmin.Drain(context.Background(), project, "dlq2-sub", ps.Addr)
	if err != nil || len(out) != 2 {
		t.Fatalf("dead-letter topic: %d messages, %v; want 2", len(out), err)
	}
	for _, m := range out {
		a := m.Attributes
		want := map[string]string{"throttled": "3", "malformed": "1"}[string(m.Data)]
		if a["custom"] != "kept" || a[AttrAttempts] != want {
			t.Errorf("message %q: attributes %v, want custom kept and attempts %s", m.Data, a, want)
		}
		if string(m.Data) == "malformed" && !strings.Contains(a[AttrError], `malformed "attempts" attribute "many"`) {
			t.Errorf("message %q: error %q, want the malformed value", m.Data, a[AttrError])
		}
		if string(m.Data) == "throttled" && a[AttrStatusCode] == "503" {
			t.Errorf("message %q: status code %q from the pass before", m.Data, a[AttrStatusCode])
		}
	}
}
