package pipeline

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
)

// TestDeadLetterSurvivesEmulatorOutage stops the Pub/Sub emulator in the
// middle of a run that is publishing dead letters, and starts it again on
// the same address. Publishes that fail while it is down are retried until
// it is back (within --publish_timeout), so every throttled payload is
// published at least once: to the emulator before it stopped or to the one
// after. (When the outage outlasts the publish timeout the bundle fails
// instead, with a clear error: TestPublishFailureFailsRun.)
func TestDeadLetterSurvivesEmulatorOutage(t *testing.T) {
	const n = 400
	old := pstest.NewServerWithAddress("127.0.0.1:0")
	addr := old.Addr
	ctx := context.Background()
	if err := pubsubadmin.CreateTopic(ctx, project, "dlq", addr); err != nil {
		t.Fatal(err)
	}

	// Stop the emulator once it holds 50 dead letters, and bring a new one
	// up on the same address.
	published := map[string]bool{}
	var fresh *pstest.Server
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		for len(old.Messages()) < 50 {
			time.Sleep(5 * time.Millisecond)
		}
		for _, m := range old.Messages() {
			published[string(m.Data)] = true
		}
		old.Close()
		time.Sleep(300 * time.Millisecond) // an outage the publisher has to retry across
		fresh = pstest.NewServerWithAddress(addr)
		if err := pubsubadmin.CreateTopic(ctx, project, "dlq", addr); err != nil {
			t.Error(err)
		}
	}()

	o := baseOptions(t)
	o.Generate = n
	o.Caller = "always429"
	o.BatchSize = 20 // a slow enough run for the outage to fall inside it
	o.DeadLetterTopic = "dlq"
	o.PubSubHost = addr
	o.PublishTimeout = 30 * time.Second
	sum := run(t, o)
	<-restarted
	defer fresh.Close()
	for _, m := range fresh.Messages() {
		published[string(m.Data)] = true
	}
	if sum.Total() != n || sum.ClientThrottled+sum.ServerThrottled != n {
		t.Errorf("summary %+v: want all %d throttled", sum, n)
	}
	if len(published) != n {
		t.Errorf("%d distinct dead letters published across the outage, want %d", len(published), n)
	}
	if len(fresh.Messages()) == 0 {
		t.Errorf("nothing was published after the emulator came back: the outage fell outside the run")
	}
}
