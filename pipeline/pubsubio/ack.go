package pubsubio

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamthrottle/beamthrottle/internal/pubsubconn"
)

func init() {
	register.DoFn2x1[context.Context, string, error](&ackFn{})
}

var ackedCount = beam.NewCounter("pubsubio", "acked")

// Ack acknowledges on the subscription in cfg the ack IDs of ackIDs, a
// PCollection<string>: the [Message.AckID] values of messages read with
// [ReadConfig.ManualAck] whose outputs the pipeline has written durably.
// Empty IDs are ignored.
//
// Ack collects the IDs of a bundle and acknowledges them in FinishBundle
// (and whenever it has collected 1000), then stops this worker process's
// Read from extending their leases. If Pub/Sub refuses an acknowledgement
// (subscription missing, permission denied, service unreachable) the bundle
// fails with an error naming the subscription, and the runner retries it or
// fails the job; acknowledging an ID twice is harmless. An ack ID whose
// lease has lapsed is accepted but has no effect: Pub/Sub has delivered, or
// will deliver, its message again. (Subscriptions with exactly-once
// delivery refuse such IDs instead, which fails the bundle every time it is
// retried; Ack does not support them.)
//
//	msgs := pubsubio.Read(s, pubsubio.ReadConfig{Project: "p", Subscription: "in", ManualAck: true})
//	_, published := pubsubio.PublishAcked(s, pubsubio.PublishConfig{Project: "p", Topic: "out"}, msgs)
//	pubsubio.Ack(s, pubsubio.AckConfig{Project: "p", Subscription: "in"}, published)
//
// Ack panics if cfg lacks Project or Subscription or ackIDs is not a
// PCollection<string>; see [TryAck].
func Ack(s beam.Scope, cfg AckConfig, ackIDs beam.PCollection) {
	if err := TryAck(s, cfg, ackIDs); err != nil {
		panic(err)
	}
}

// TryAck is [Ack] returning an error instead of panicking on a bad
// configuration or input type.
func TryAck(s beam.Scope, cfg AckConfig, ackIDs beam.PCollection) error {
	s = s.Scope("pubsubio.Ack")
	if err := cfg.check(); err != nil {
		return fmt.Errorf("pubsubio.Ack: %w", err)
	}
	if _, err := beam.TryParDo(s, &ackFn{Cfg: cfg}, ackIDs); err != nil {
		return fmt.Errorf("pubsubio.Ack: %w", err)
	}
	return nil
}

// ackFn collects ack IDs and acknowledges them in batches.
type ackFn struct {
	Cfg AckConfig

	client *sharedClient
	sub    string
	batch  []string
}

func (f *ackFn) Setup(ctx context.Context) error {
	sc, err := acquireClient(ctx, f.Cfg.Project, f.Cfg.Endpoint)
	if err != nil {
		return fmt.Errorf("pubsubio.Ack: %w", err)
	}
	f.client = sc
	f.sub = pubsubconn.SubscriptionName(f.Cfg.Project, f.Cfg.Subscription)
	return nil
}

func (f *ackFn) StartBundle() {
	f.batch = f.batch[:0] // Left over by a failed bundle.
}

func (f *ackFn) ProcessElement(ctx context.Context, ackID string) error {
	if ackID == "" {
		return nil
	}
	f.batch = append(f.batch, ackID)
	if len(f.batch) >= ackBatch {
		return f.flush(ctx)
	}
	return nil
}

// FinishBundle acknowledges the IDs collected since the last flush.
func (f *ackFn) FinishBundle(ctx context.Context) error {
	return f.flush(ctx)
}

// flush acknowledges the collected IDs, then stops extending their leases.
// On failure the leases are kept, so the retried bundle can still
// acknowledge the messages before Pub/Sub delivers them again.
func (f *ackFn) flush(ctx context.Context) error {
	ids := f.batch
	f.batch = f.batch[:0]
	if len(ids) == 0 {
		return nil
	}
	if err := acknowledge(ctx, f.client.client, f.sub, ids); err != nil {
		return fmt.Errorf("pubsubio.Ack: acknowledging %d messages on %s (%s): %w", len(ids), f.sub, pubsubconn.Describe(f.Cfg.Endpoint), err)
	}
	forgetLeases(f.Cfg.Endpoint, f.sub, ids)
	ackedCount.Inc(ctx, int64(len(ids)))
	return nil
}

func (f *ackFn) Teardown() {
	if f.client != nil {
		releaseClient(f.client)
		f.client = nil
	}
}
