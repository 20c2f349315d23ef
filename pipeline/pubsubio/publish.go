package pubsubio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamthrottle/beamthrottle/internal/pubsubconn"
)

func init() {
	register.DoFn3x1[context.Context, Message, func(Rejected), error](&publishFn{})
	register.DoFn5x1[context.Context, beam.EventTime, Message, func(Rejected), func(beam.EventTime, string), error](&publishAckedFn{})
	register.Emitter1[Rejected]()
	register.Emitter2[beam.EventTime, string]()
}

var (
	publishedCount = beam.NewCounter("pubsubio", "published")
	rejectedCount  = beam.NewCounter("pubsubio", "rejected")
	failedCount    = beam.NewCounter("pubsubio", "publish_failed")
)

// Publish writes msgs, a PCollection<Message>, to the topic in cfg and
// returns the messages it did not send, a PCollection<Rejected>.
//
// Messages that Pub/Sub can never accept ([Validate] fails: too large, too
// many or too long attributes, empty) are not sent; they are emitted on the
// returned collection with the reason, so the pipeline can route them to an
// error sink. Every other message is published, and the bundle only
// completes once Pub/Sub has confirmed every one of its messages. If any
// publish fails (topic missing, permission denied, service unreachable
// beyond cfg.Timeout, ...) the bundle returns an error naming the topic, the
// number of failed messages and the first error, and the runner retries the
// bundle or fails the job: nothing is dropped silently. A retried bundle
// publishes its messages again, so delivery is at least once.
//
// ID, PublishTime and AckID of the input messages are ignored (see
// [PublishAcked] for AckID). Each worker process shares one client and one
// publisher per configuration.
//
//	rejected := pubsubio.Publish(s, pubsubio.PublishConfig{
//		Project: "my-project",
//		Topic:   "dead-letter",
//	}, msgs)
//
// Publish panics if cfg lacks Project or Topic; see [TryPublish].
func Publish(s beam.Scope, cfg PublishConfig, msgs beam.PCollection) (rejected beam.PCollection) {
	rejected, err := TryPublish(s, cfg, msgs)
	if err != nil {
		panic(err)
	}
	return rejected
}

// TryPublish is [Publish] returning an error instead of panicking on a bad
// configuration or input type.
func TryPublish(s beam.Scope, cfg PublishConfig, msgs beam.PCollection) (beam.PCollection, error) {
	s = s.Scope("pubsubio.Publish")
	if err := cfg.check(); err != nil {
		return beam.PCollection{}, fmt.Errorf("pubsubio.Publish: %w", err)
	}
	return tryParDo1(s, &publishFn{Cfg: cfg}, msgs)
}

// PublishAcked is [Publish] that also reports which messages Pub/Sub has
// confirmed, for end-to-end acknowledgement (see [ReadConfig.ManualAck]):
// published is a PCollection<string> of the AckIDs of the bundle's
// messages, emitted from FinishBundle once every publish of the bundle has
// been confirmed, to be passed to [Ack].
//
// Only non-empty AckIDs are emitted, each once per bundle. A rejected
// message's AckID is not emitted: the message goes to rejected, AckID
// included, so that the pipeline can acknowledge it after writing it
// elsewhere. If any publish of a bundle fails, the bundle fails and emits
// nothing, as Publish does. A message with several outputs must reach Ack
// only once all of them are durable; PublishAcked knows only the messages
// it publishes.
//
// Both outputs are in the global window: an element emitted from
// FinishBundle cannot be given a window, so msgs is re-windowed into the
// global window first if it is not already in it. Each ack ID keeps its
// message's timestamp.
//
//	msgs := pubsubio.Read(s, pubsubio.ReadConfig{Project: "p", Subscription: "in", ManualAck: true})
//	rejected, published := pubsubio.PublishAcked(s, pubsubio.PublishConfig{Project: "p", Topic: "out"}, msgs)
//	pubsubio.Ack(s, pubsubio.AckConfig{Project: "p", Subscription: "in"}, published)
//
// PublishAcked panics if cfg lacks Project or Topic; see [TryPublishAcked].
func PublishAcked(s beam.Scope, cfg PublishConfig, msgs beam.PCollection) (rejected, published beam.PCollection) {
	rejected, published, err := TryPublishAcked(s, cfg, msgs)
	if err != nil {
		panic(err)
	}
	return rejected, published
}

// TryPublishAcked is [PublishAcked] returning an error instead of panicking
// on a bad configuration or input type.
func TryPublishAcked(s beam.Scope, cfg PublishConfig, msgs beam.PCollection) (rejected, published beam.PCollection, err error) {
	s = s.Scope("pubsubio.PublishAcked")
	if err := cfg.check(); err != nil {
		return beam.PCollection{}, beam.PCollection{}, fmt.Errorf("pubsubio.PublishAcked: %w", err)
	}
	if !msgs.IsValid() {
		return beam.PCollection{}, beam.PCollection{}, errors.New("pubsubio.PublishAcked: invalid input PCollection")
	}
	if msgs.WindowingStrategy().Fn.Kind != window.GlobalWindows {
		msgs = beam.WindowInto(s, window.NewGlobalWindows(), msgs)
	}
	outs, err := beam.TryParDo(s, &publishAckedFn{Cfg: cfg}, msgs)
	if err != nil {
		return beam.PCollection{}, beam.PCollection{}, fmt.Errorf("pubsubio.PublishAcked: %w", err)
	}
	return outs[0], outs[1], nil
}

// tryParDo1 is beam.TryParDo for a DoFn with exactly one output.
func tryParDo1(s beam.Scope, dofn any, in beam.PCollection) (beam.PCollection, error) {
	outs, err := beam.TryParDo(s, dofn, in)
	if err != nil {
		return beam.PCollection{}, err
	}
	return outs[0], nil
}

// publisher is what both publishing DoFns share: the worker's client and
// publisher, and the publish calls of the current bundle.
type publisher struct {
	cfg     PublishConfig
	client  *sharedClient
	pub     *pubsub.Publisher
	topic   string
	pending []*pubsub.PublishResult
}

// setup connects to cfg's topic.
func (p *publisher) setup(ctx context.Context, cfg PublishConfig) error {
	sc, err := acquireClient(ctx, cfg.Project, cfg.Endpoint)
	if err != nil {
		return err
	}
	p.cfg = cfg
	p.client = sc
	p.topic = pubsubconn.TopicName(cfg.Project, cfg.Topic)
	p.pub = sc.publisher(p.topic, cfg.timeout())
	return nil
}

// publish validates m and publishes it, returning the validation error if
// Pub/Sub would refuse it.
func (p *publisher) publish(ctx context.Context, m Message) error {
	if err := Validate(m); err != nil {
		rejectedCount.Inc(ctx, 1)
		return err
	}
	p.pending = append(p.pending, p.pub.Publish(ctx, &pubsub.Message{Data: m.Data, Attributes: m.Attributes}))
	return nil
}

// wait waits for every publish since the last wait and returns a
// *PublishError if any failed.
func (p *publisher) wait(ctx context.Context) error {
	pending := p.pending
	p.pending = nil
	var failed int
	var first error
	for _, r := range pending {
		if _, err := r.Get(ctx); err != nil {
			failed++
			if first == nil {
				first = err
			}
		}
	}
	publishedCount.Inc(ctx, int64(len(pending)-failed))
	if failed == 0 {
		return nil
	}
	failedCount.Inc(ctx, int64(failed))
	return &PublishError{
		Topic: p.topic, Failed: failed, Total: len(pending),
		Endpoint: pubsubconn.Describe(p.cfg.Endpoint), Timeout: p.cfg.timeout(), Err: first,
	}
}

// teardown releases the client.
func (p *publisher) teardown() {
	if p.client != nil {
		releaseClient(p.client)
		p.client, p.pub = nil, nil
	}
}

// publishFn publishes each valid message and waits for all results in
// FinishBundle.
type publishFn struct {
	Cfg PublishConfig

	p publisher
}

func (f *publishFn) Setup(ctx context.Context) error {
	if err := f.p.setup(ctx, f.Cfg); err != nil {
		return fmt.Errorf("pubsubio.Publish: %w", err)
	}
	return nil
}

func (f *publishFn) ProcessElement(ctx context.Context, m Message, rejected func(Rejected)) error {
	if err := f.p.publish(ctx, m); err != nil {
		rejected(Rejected{Message: m, Reason: err.Error()})
	}
	return nil
}

// FinishBundle waits for every publish of the bundle and fails the bundle if
// any failed. It emits nothing; Beam requires it to declare ProcessElement's
// emitter.
func (f *publishFn) FinishBundle(ctx context.Context, _ func(Rejected)) error {
	return f.p.wait(ctx)
}

func (f *publishFn) Teardown() {
	f.p.teardown()
}

// publishAckedFn is publishFn that also emits the AckIDs of the published
// messages once all are confirmed.
type publishAckedFn struct {
	Cfg PublishConfig

	p    publisher
	acks []timedAckID    // AckIDs of the bundle's published messages.
	seen map[string]bool // AckIDs in acks.
}

// timedAckID is an AckID with its message's timestamp.
type timedAckID struct {
	id string
	t  beam.EventTime
}

func (f *publishAckedFn) Setup(ctx context.Context) error {
	if err := f.p.setup(ctx, f.Cfg); err != nil {
		return fmt.Errorf("pubsubio.PublishAcked: %w", err)
	}
	f.seen = map[string]bool{}
	return nil
}

func (f *publishAckedFn) StartBundle(_ context.Context, _ func(Rejected), _ func(beam.EventTime, string)) {
	// Left over by a failed bundle.
	f.p.pending = nil
	f.acks = f.acks[:0]
	clear(f.seen)
}

func (f *publishAckedFn) ProcessElement(ctx context.Context, t beam.EventTime, m Message, rejected func(Rejected), _ func(beam.EventTime, string)) error {
	if err := f.p.publish(ctx, m); err != nil {
		rejected(Rejected{Message: m, Reason: err.Error()})
		return nil
	}
	if m.AckID != "" && !f.seen[m.AckID] {
		f.seen[m.AckID] = true
		f.acks = append(f.acks, timedAckID{m.AckID, t})
	}
	return nil
}

// FinishBundle waits for every publish of the bundle, fails the bundle if
// any failed, and otherwise emits the AckIDs of the published messages.
func (f *publishAckedFn) FinishBundle(ctx context.Context, _ func(Rejected), published func(beam.EventTime, string)) error {
	acks := f.acks
	f.acks = f.acks[:0]
	clear(f.seen)
	if err := f.p.wait(ctx); err != nil {
		return err
	}
	for _, a := range acks {
		published(a.t, a.id)
	}
	return nil
}

func (f *publishAckedFn) Teardown() {
	f.p.teardown()
}

// PublishError is the error a Publish bundle fails with when Pub/Sub did not
// confirm some of its messages.
type PublishError struct {
	// Topic is the full topic name.
	Topic string
	// Failed of Total messages of the bundle were not confirmed.
	Failed, Total int
	// Endpoint describes where the client connected.
	Endpoint string
	// Timeout is the publish timeout that applied.
	Timeout time.Duration
	// Err is the first failure.
	Err error
}

func (e *PublishError) Error() string {
	hint := ""
	if errors.Is(e.Err, context.DeadlineExceeded) {
		hint = fmt.Sprintf(" (no confirmation within the %v publish timeout: is the service reachable?)", e.Timeout)
	}
	return fmt.Sprintf("pubsubio.Publish: %d of %d messages not published to %s (%s): first error: %v%s",
		e.Failed, e.Total, e.Topic, e.Endpoint, e.Err, hint)
}

// Unwrap returns the first failure.
func (e *PublishError) Unwrap() error { return e.Err }
