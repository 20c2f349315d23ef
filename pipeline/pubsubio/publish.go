package pubsubio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn3x1[context.Context, Message, func(Rejected), error](&publishFn{})
	register.Emitter1[Rejected]()
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
// ID and PublishTime of the input messages are ignored. Each worker process
// shares one client and one publisher per configuration.
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

// tryParDo1 is beam.TryParDo for a DoFn with exactly one output.
func tryParDo1(s beam.Scope, dofn any, in beam.PCollection) (beam.PCollection, error) {
	outs, err := beam.TryParDo(s, dofn, in)
	if err != nil {
		return beam.PCollection{}, err
	}
	return outs[0], nil
}

// publishFn publishes each valid message and waits for all results in
// FinishBundle.
type publishFn struct {
	Cfg PublishConfig

	client  *sharedClient
	pub     *pubsub.Publisher
	topic   string
	pending []*pubsub.PublishResult
}

func (f *publishFn) Setup(ctx context.Context) error {
	sc, err := acquireClient(ctx, f.Cfg.Project, f.Cfg.Endpoint)
	if err != nil {
		return fmt.Errorf("pubsubio.Publish: %w", err)
	}
	f.client = sc
	f.topic = topicName(f.Cfg.Project, f.Cfg.Topic)
	f.pub = sc.publisher(f.topic, f.Cfg.timeout())
	return nil
}

func (f *publishFn) ProcessElement(ctx context.Context, m Message, rejected func(Rejected)) error {
	if err := Validate(m); err != nil {
		rejectedCount.Inc(ctx, 1)
		rejected(Rejected{Message: m, Reason: err.Error()})
		return nil
	}
	f.pending = append(f.pending, f.pub.Publish(ctx, &pubsub.Message{Data: m.Data, Attributes: m.Attributes}))
	return nil
}

// FinishBundle waits for every publish of the bundle and fails the bundle if
// any failed. It emits nothing; Beam requires it to declare ProcessElement's
// emitter.
func (f *publishFn) FinishBundle(ctx context.Context, _ func(Rejected)) error {
	pending := f.pending
	f.pending = nil
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
		Topic: f.topic, Failed: failed, Total: len(pending),
		Endpoint: describeEndpoint(f.Cfg.Endpoint), Timeout: f.Cfg.timeout(), Err: first,
	}
}

func (f *publishFn) Teardown() {
	if f.client != nil {
		releaseClient(f.client)
		f.client, f.pub = nil, nil
	}
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
