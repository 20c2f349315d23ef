package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestInterruptSubscription cancels the context of a run reading a
// subscription, against a quota-limited API, once calls are being made. The
// run stops reading and ends by itself: Run returns its summary without
// error, every message is either in exactly one output line (and
// acknowledged) or still in the subscription (never pulled, or given back),
// every call the API accepted is a success line, and the summary's
// Interrupted counts the lines that say the interrupt kept them from a call.
func TestInterruptSubscription(t *testing.T) {
	const n = 300
	ps := emulator(t, "in")
	var msgs []pubsubio.Message
	for i := range n {
		msgs = append(msgs, pubsubio.Message{Data: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	if _, err := pubsubadmin.PublishMessages(context.Background(), project, "in", ps.Addr, msgs); err != nil {
		t.Fatal(err)
	}
	srv, err := testserver.NewServer(testserver.Config{Quota: 20}) // n would take 15 s
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := baseOptions(t)
	o.Mode, o.Strategy = "paced", "" // the binary's defaults: postpone what the pacer holds back
	o.CallerOptions.URL = srv.Endpoint()
	o.Subscription, o.PubSubHost = "in-sub", ps.Addr
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := Run(ctx, o, nil)
		done <- result{sum, err}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for srv.Handler.Stats().Accepted < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls accepted in 60 s", srv.Handler.Stats().Accepted)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	var res result
	select {
	case res = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end within 60 s of the interrupt")
	}
	if res.err != nil {
		t.Fatalf("Run: %v", res.err)
	}

	lines := map[string]int{}
	var interrupted, success int64
	for _, outcome := range []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors} {
		for _, l := range readLines(t, o.OutputPrefix, outcome) {
			in, _ := l["input"].(string)
			lines[in]++
			if e, _ := l["error"].(string); strings.Contains(e, "the pipeline was interrupted") {
				interrupted++
			}
			if outcome == OutSuccess {
				success++
			}
		}
	}
	left, err := pubsubadmin.Drain(context.Background(), project, "in-sub", ps.Addr)
	if err != nil {
		t.Fatal(err)
	}
	acked := ackedPayloads(ps, "in")
	for _, m := range left {
		if lines[string(m.Data)] != 0 {
			t.Errorf("message %s is in the outputs and still in the subscription", m.Data)
		}
	}
	for in, k := range lines {
		if k != 1 || !acked[in] {
			t.Errorf("message %s: %d lines, acknowledged %v; want 1 line, acknowledged", in, k, acked[in])
		}
	}
	if len(lines)+len(left) != n {
		t.Errorf("%d messages in the outputs + %d left in the subscription, want %d", len(lines), len(left), n)
	}
	if accepted := srv.Handler.Stats().Accepted; success != accepted {
		t.Errorf("%d success lines, want one for each of the %d calls the API accepted", success, accepted)
	}
	if res.sum.Total() != int64(len(lines)) || res.sum.Interrupted != interrupted {
		t.Errorf("summary %+v: total %d and interrupted %d, want %d lines and %d interrupted", res.sum, res.sum.Total(),
			res.sum.Interrupted, len(lines), interrupted)
	}
	t.Logf("%d lines (%d success, %d not called), %d left in the subscription", len(lines), success, interrupted, len(left))
}
