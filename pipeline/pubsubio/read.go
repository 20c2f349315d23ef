package pubsubio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/beamthrottle/beamthrottle/internal/interrupt"
	"github.com/beamthrottle/beamthrottle/internal/pubsubconn"
)

func init() {
	register.DoFn4x2[context.Context, *sdf.LockRTracker, []byte, func(beam.EventTime, Message),
		sdf.ProcessContinuation, error](&readFn{})
	register.Emitter2[beam.EventTime, Message]()
}

var (
	readCount = beam.NewCounter("pubsubio", "read")
)

const (
	// ackBatch is the most ack IDs sent in one Acknowledge or
	// ModifyAckDeadline request; the service limits requests to 512 KiB.
	ackBatch = 1000
	// emptyPollDelay is how long a streaming Read waits to pull again after
	// an empty Pull, so that a server that answers empty at once is not
	// polled in a hot loop.
	emptyPollDelay = 100 * time.Millisecond
)

// Read emits the messages of a subscription as a PCollection<Message>, with
// each element's event time set to the message's publish time.
//
// Read pulls with unary Pull in rounds: a splittable DoFn pulls until a Pull
// returns messages (at most cfg.MaxMessages), emits them and checkpoints, so
// each round is one short bundle. It runs forever (cfg.IdleTimeout zero:
// streaming; cancel the job's context to stop it) or until Pull has
// returned nothing for cfg.IdleTimeout (drain mode: the pipeline ends by
// itself once the backlog is read). It also ends when pipeline.Run's
// context is cancelled and the read runs in Run's process (Prism): messages
// pulled then but not yet emitted are given back to Pub/Sub, which delivers
// them again. One Pull loop runs per Read: runner splits are refused.
//
// Acknowledgement: a message is acknowledged only after the runner has
// committed the bundle that emitted it. The round that emitted it passes its
// ack ID to the next round through the checkpoint's residual restriction;
// the runner schedules that residual only once it has committed the bundle
// and its output, and the next round acknowledges first thing. Until then
// Read keeps the message leased (cfg.AckDeadline, renewed, for at most
// cfg.MaxExtension). If the bundle fails, the job dies or is cancelled, or
// an acknowledgement fails, the message is not acknowledged and Pub/Sub
// delivers it again once its lease lapses: nothing is acknowledged before
// its element is committed and nothing is lost, but delivery is at least
// once, so consumers must tolerate duplicates. The last round of a drain
// acknowledges the round before it and then finds nothing to pull, so a
// drained subscription is empty when the pipeline ends.
//
// With cfg.ManualAck, "committed by the runner" is not enough (on Prism it
// means held in the runner's memory), so Read acknowledges nothing: it
// emits each message with [Message.AckID] set and keeps it leased until
// the pipeline acknowledges it with [Ack], after writing its outputs
// durably, or until cfg.MaxExtension has passed (then Pub/Sub delivers it
// again). The lease keeper is shared by every Read of the worker process,
// so an Ack anywhere in the process stops the extension. An Ack in another
// process acknowledges the message too, but this process goes on extending
// its lease (harmlessly) until cfg.MaxExtension.
//
//	msgs := pubsubio.Read(s, pubsubio.ReadConfig{
//		Project: "my-project", Subscription: "requests", ManualAck: true,
//	})
//	// ... process msgs into outs, a PCollection<Message> carrying the AckIDs ...
//	_, published := pubsubio.PublishAcked(s, pubsubio.PublishConfig{Project: "my-project", Topic: "results"}, outs)
//	pubsubio.Ack(s, pubsubio.AckConfig{Project: "my-project", Subscription: "requests"}, published)
//
// Bundle finalization (beam.BundleFinalization) would be the textbook
// mechanism, and Prism does request it after persisting a bundle, but the
// Beam Go v2.77.0 harness runs finalization callbacks only for the first
// bundle of each plan instance (exec.Plan.Finalize swaps the plan's
// finalizer while the DoFn nodes keep the old one), so later callbacks
// never run and pile up. The checkpoint hand-off above does not depend on it
// and works on every runner that supports self-checkpointing splittable
// DoFns (Prism, Dataflow).
//
// The watermark follows wall-clock time at each checkpoint, so a message
// published long before it is read (a backlog, a redelivery) may be late for
// event-time windows; use the global window or allowed lateness.
//
//	msgs := pubsubio.Read(s, pubsubio.ReadConfig{
//		Project:      "my-project",
//		Subscription: "dead-letter-replay",
//		IdleTimeout:  30 * time.Second,
//	})
//
// Read panics on a configuration that cannot work; see [TryRead].
func Read(s beam.Scope, cfg ReadConfig) beam.PCollection {
	out, err := TryRead(s, cfg)
	if err != nil {
		panic(err)
	}
	return out
}

// TryRead is [Read] returning an error instead of panicking.
func TryRead(s beam.Scope, cfg ReadConfig) (beam.PCollection, error) {
	s = s.Scope("pubsubio.Read")
	if err := cfg.check(); err != nil {
		return beam.PCollection{}, fmt.Errorf("pubsubio.Read: %w", err)
	}
	return tryParDo1(s, &readFn{Cfg: cfg}, beam.Impulse(s))
}

// readFn is the splittable DoFn behind Read; see roundRestriction.
type readFn struct {
	Cfg ReadConfig

	cfg    ReadConfig // Cfg with defaults
	client *sharedClient
	sub    string
	leases *leaseKeeper
}

func (f *readFn) Setup(ctx context.Context) error {
	f.cfg = f.Cfg.withDefaults()
	sc, err := acquireClient(ctx, f.cfg.Project, f.cfg.Endpoint)
	if err != nil {
		return fmt.Errorf("pubsubio.Read: %w", err)
	}
	f.client = sc
	f.sub = pubsubconn.SubscriptionName(f.cfg.Project, f.cfg.Subscription)
	f.leases = sc.leaseKeeper(f.sub, f.cfg.AckDeadline)
	return nil
}

func (f *readFn) Teardown() {
	if f.client != nil {
		releaseClient(f.client)
		f.client = nil
	}
}

func (f *readFn) CreateInitialRestriction(_ []byte) roundRestriction {
	return roundRestriction{}
}

func (f *readFn) SplitRestriction(_ []byte, r roundRestriction) []roundRestriction {
	return []roundRestriction{r}
}

func (f *readFn) RestrictionSize(_ []byte, _ roundRestriction) float64 {
	return 1
}

func (f *readFn) CreateTracker(r roundRestriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(newRoundTracker(r))
}

// TruncateRestriction ends the read when the runner drains the job, after
// acknowledging what the previous round emitted. Messages pulled but not
// emitted are delivered again later.
func (f *readFn) TruncateRestriction(rt *sdf.LockRTracker, _ []byte) roundRestriction {
	r := rt.GetRestriction().(roundRestriction)
	return roundRestriction{Round: r.Round, Ack: r.Ack, Stop: true}
}

func (f *readFn) CreateWatermarkEstimator() *sdf.WallTimeWatermarkEstimator {
	return &sdf.WallTimeWatermarkEstimator{}
}

// ProcessElement runs one pull round: it acknowledges what the previous
// round emitted, then pulls until a Pull returns messages, emits them and
// checkpoints. A round without messages checkpoints after one Pull when
// streaming, and ends the read once the idle timeout has passed.
func (f *readFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, _ []byte, emit func(beam.EventTime, Message)) (sdf.ProcessContinuation, error) {
	rest := rt.GetRestriction().(roundRestriction)
	if !rt.TryClaim(claimRound{}) {
		return sdf.StopProcessing(), rt.GetError()
	}
	// This round runs, so the runner has committed the previous one.
	f.acknowledge(ctx, rest.Ack)
	if rest.Stop || interrupt.Is() {
		rt.TryClaim(claimEnd{})
		return sdf.StopProcessing(), rt.GetError()
	}
	start := time.Now()
	for {
		if interrupt.Is() {
			log.Infof(ctx, "pubsubio.Read: the pipeline is interrupted, stopping the read of %s", f.sub)
			rt.TryClaim(claimEnd{})
			return sdf.StopProcessing(), rt.GetError()
		}
		wait := f.cfg.PollTimeout
		if f.cfg.IdleTimeout > 0 {
			left := f.cfg.IdleTimeout - time.Since(start)
			if left <= 0 {
				log.Infof(ctx, "pubsubio.Read: nothing pulled from %s for %v, stopping", f.sub, f.cfg.IdleTimeout)
				rt.TryClaim(claimEnd{})
				return sdf.StopProcessing(), rt.GetError()
			}
			wait = min(wait, left)
		}
		msgs, err := f.pull(ctx, wait)
		if err != nil {
			return sdf.StopProcessing(), err
		}
		if len(msgs) > 0 && interrupt.Is() {
			f.release(ctx, msgs)
			continue // and stop
		}
		if len(msgs) > 0 {
			if err := f.handOver(ctx, rt, msgs, emit); err != nil {
				return sdf.StopProcessing(), err
			}
			rt.TryClaim(claimCheckpoint{})
			return sdf.ResumeProcessingIn(0), nil
		}
		if f.cfg.IdleTimeout == 0 {
			rt.TryClaim(claimCheckpoint{})
			return sdf.ResumeProcessingIn(emptyPollDelay), nil
		}
	}
}

// handOver leases msgs, records their ack IDs for the next round (unless
// the pipeline acknowledges them: ManualAck) and emits them.
func (f *readFn) handOver(ctx context.Context, rt *sdf.LockRTracker, msgs []*pubsubpb.ReceivedMessage, emit func(beam.EventTime, Message)) error {
	ackIDs := make([]string, len(msgs))
	for i, rm := range msgs {
		ackIDs[i] = rm.GetAckId()
	}
	next := ackIDs // For the next round to acknowledge.
	if f.cfg.ManualAck {
		next = nil
	}
	if !rt.TryClaim(claimPulled{next}) {
		// Cannot happen: the tracker refuses splits until the checkpoint.
		// The messages are not emitted; they are delivered again.
		return fmt.Errorf("pubsubio.Read: round ended before %d pulled messages were emitted: %v", len(msgs), rt.GetError())
	}
	if err := f.leases.extendNow(ctx, ackIDs); err != nil {
		log.Warnf(ctx, "pubsubio.Read: leasing %d messages from %s failed, they may be delivered again: %v", len(ackIDs), f.sub, err)
	}
	f.leases.add(ackIDs, time.Now().Add(f.cfg.MaxExtension))
	for _, rm := range msgs {
		pm := rm.GetMessage()
		t := pm.GetPublishTime().AsTime()
		m := Message{
			Data:        pm.GetData(),
			Attributes:  pm.GetAttributes(),
			ID:          pm.GetMessageId(),
			PublishTime: t.UnixMicro(),
		}
		if f.cfg.ManualAck {
			m.AckID = rm.GetAckId()
		}
		emit(mtime.FromTime(t), m)
	}
	readCount.Inc(ctx, int64(len(msgs)))
	return nil
}

// pull makes one Pull that waits at most wait. Nothing pulled within wait
// is not an error; a failing server is, even if the failures were retried
// until wait ran out.
func (f *readFn) pull(ctx context.Context, wait time.Duration) ([]*pubsubpb.ReceivedMessage, error) {
	pctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	go func() { // an interrupt ends the wait
		select {
		case <-interrupt.Done():
			cancel()
		case <-pctx.Done():
		}
	}()
	var last error // the last error the retry policy saw
	resp, err := f.client.client.SubscriptionAdminClient.Pull(pctx,
		&pubsubpb.PullRequest{Subscription: f.sub, MaxMessages: int32(f.cfg.MaxMessages)},
		gax.WithRetry(func() gax.Retryer { return &recordingRetryer{inner: pullRetryer(), last: &last} }))
	if err == nil {
		return resp.GetReceivedMessages(), nil
	}
	if ctx.Err() == nil && pctx.Err() != nil && interrupt.Is() {
		return nil, nil // The interrupt ended the wait.
	}
	// Our wait ran out (the server may notice first and reset the stream) and
	// the last attempt was waiting, not failing.
	if ctx.Err() == nil && (pctx.Err() != nil || isDeadline(err)) && (last == nil || isDeadline(last)) {
		return nil, nil // Waited for messages, none came.
	}
	if last != nil && !isDeadline(last) {
		err = last
	}
	return nil, fmt.Errorf("pubsubio.Read: pulling from %s (%s): %w", f.sub, pubsubconn.Describe(f.cfg.Endpoint), err)
}

// release gives back messages pulled but not emitted (the pipeline was
// interrupted meanwhile): their lease ends now, so Pub/Sub delivers them
// again at once rather than when it lapses.
func (f *readFn) release(ctx context.Context, msgs []*pubsubpb.ReceivedMessage) {
	ackIDs := make([]string, len(msgs))
	for i, rm := range msgs {
		ackIDs[i] = rm.GetAckId()
	}
	if err := modifyAckDeadline(ctx, f.client.client, f.sub, ackIDs, 0); err != nil {
		log.Warnf(ctx, "pubsubio.Read: giving back %d messages of %s failed, they will be delivered again once their lease lapses: %v", len(ackIDs), f.sub, err)
	}
}

// acknowledge acks ackIDs, logging failures: their messages will be
// delivered again.
func (f *readFn) acknowledge(ctx context.Context, ackIDs []string) {
	if len(ackIDs) == 0 {
		return
	}
	f.leases.remove(ackIDs)
	if err := acknowledge(ctx, f.client.client, f.sub, ackIDs); err != nil {
		log.Warnf(ctx, "pubsubio.Read: acknowledging %d messages on %s failed, they will be delivered again: %v", len(ackIDs), f.sub, err)
	}
}

// recordingRetryer is a gax.Retryer that remembers the last error it saw.
type recordingRetryer struct {
	inner gax.Retryer
	last  *error
}

func (r *recordingRetryer) Retry(err error) (time.Duration, bool) {
	*r.last = err
	return r.inner.Retry(err)
}

// pullRetryer is the client library's default retry policy for Pull.
func pullRetryer() gax.Retryer {
	return gax.OnCodes([]codes.Code{codes.Unknown, codes.Aborted, codes.Unavailable, codes.Internal},
		gax.Backoff{Initial: 100 * time.Millisecond, Max: 60 * time.Second, Multiplier: 1.3})
}

// acknowledge acks ackIDs on sub.
func acknowledge(ctx context.Context, c *pubsub.Client, sub string, ackIDs []string) error {
	var errs []error
	for _, ids := range chunk(ackIDs, ackBatch) {
		errs = append(errs, c.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids}))
	}
	return errors.Join(errs...)
}

// modifyAckDeadline sets the ack deadline of ackIDs on sub to d from now.
func modifyAckDeadline(ctx context.Context, c *pubsub.Client, sub string, ackIDs []string, d time.Duration) error {
	var errs []error
	for _, ids := range chunk(ackIDs, ackBatch) {
		errs = append(errs, c.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{
			Subscription: sub, AckIds: ids, AckDeadlineSeconds: int32(d / time.Second),
		}))
	}
	return errors.Join(errs...)
}

// isDeadline reports whether err is a deadline expiring.
func isDeadline(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// chunk splits ids into slices of at most n.
func chunk(ids []string, n int) [][]string {
	var out [][]string
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}
