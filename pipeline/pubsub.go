package pipeline

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/gcpopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	register.Function1x1[pubsubio.Message, Element](messageToElement)
	register.DoFn5x0[context.Context, throttle.Record, func(throttle.Record), func(pubsubio.Message), func(throttle.Record)](&deadLetterFn{})
	register.Function1x1[Result, pubsubio.Message](resultToMessage)
	register.Function1x2[pubsubio.Rejected, string, error](formatRejected)
	register.Function1x2[pubsubio.Rejected, Line, error](rejectedLine)
	register.Emitter1[pubsubio.Message]()
}

// Dead-letter message attributes. The data of a dead-letter message is the
// original payload, unchanged.
const (
	AttrError       = "error"                 // why it failed, truncated to 1024 bytes
	AttrOutcome     = "outcome"               // client_throttled, server_throttled or error
	AttrStatusCode  = "status_code"           // HTTP status, when known
	AttrGRPCCode    = "grpc_code"             // gRPC code, when known
	AttrProbability = "rejection_probability" // client rejection probability at decision time
	AttrAttempts    = "attempts"              // total attempts, across reprocessing runs; each pass counts one at least
	AttrFirst       = "first_attempt"         // RFC 3339, first attempt of the last run
	AttrLast        = "last_attempt"          // RFC 3339
	AttrMessageID   = "message_id"            // the original Pub/Sub message ID, when the input came from Pub/Sub
	AttrGroup       = "group"                 // throttle group
	AttrPipeline    = "pipeline"              // --name of the pipeline that wrote it
	AttrRetryAfter  = "retry_after_ms"        // the server's Retry-After, when given
)

// messageToElement turns a message read from a subscription into an
// Element. The attempts of earlier runs come from the "attempts" attribute
// (dead-letter messages written by this pipeline carry it); the original
// message ID is kept through reprocessing.
func messageToElement(m pubsubio.Message) Element {
	e := Element{Data: m.Data, MessageID: m.ID, Attributes: m.Attributes, AckID: m.AckID}
	if id := m.Attributes[AttrMessageID]; id != "" {
		e.MessageID = id
	}
	if a, ok := m.Attributes[AttrAttempts]; ok {
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			// Malformed: keep the value so the reprocessing step can route it to errors.
			e.Attempts = -1
		} else {
			e.Attempts = n
		}
	}
	return e
}

// deadLetterFn turns failure Records into dead-letter messages (msgs),
// passing each Record on (kept) for its output's files, unless Pub/Sub
// would refuse its message (too large, see pubsubio.Validate): that Record
// becomes an error Record saying why (refused), for the errors files only,
// so that the element is in one output. The summary moves it from the
// output it came from to errors (see refusedCounters).
type deadLetterFn struct {
	Pipeline string
	Run      string // the reprocessing run's ID (AttrReprocessRun), "" for other runs
}

func (f *deadLetterFn) ProcessElement(ctx context.Context, r throttle.Record, kept func(throttle.Record), msgs func(pubsubio.Message), refused func(throttle.Record)) {
	m := pubsubio.Message{Data: r.Input, Attributes: deadLetterAttributes(r, r.MessageID, f.Pipeline, f.Run), AckID: r.AckID}
	err := pubsubio.Validate(m)
	if err == nil {
		kept(r)
		msgs(m)
		return
	}
	deadLetterRejected.Inc(ctx, 1)
	if c, ok := refusedCounters[outputOf(r.Outcome)]; ok {
		c.Inc(ctx, 1)
	}
	e := r
	e.Outcome = throttle.OutcomeError
	e.Error = "pipeline: cannot publish to the dead-letter topic: " + err.Error()
	if r.Error != "" {
		e.Error += "; original error (" + string(r.Outcome) + "): " + r.Error
	}
	refused(e)
}

// deadLetterRejected counts the dead-letter messages Pub/Sub would refuse
// (Summary.DeadLetterRejected), with the messages of other topics it
// refused (see publish).
var deadLetterRejected = beam.NewCounter(metricsNamespace, metricDeadLetterRejected)

// refusedCounters count, by the output they came from, the throttled
// records whose dead-letter message Pub/Sub would refuse: they went to the
// errors output instead, and the summary moves them there.
var refusedCounters = map[string]beam.Counter{
	OutClientThrottled: beam.NewCounter(metricsNamespace, refusedPrefix+OutClientThrottled),
	OutServerThrottled: beam.NewCounter(metricsNamespace, refusedPrefix+OutServerThrottled),
}

// refusedPrefix starts the names of refusedCounters.
const refusedPrefix = "dead_letter_refused_"

// ownAttributes are the attributes this pipeline sets on the messages it
// writes: a dead-letter message gets them afresh, not from the message it
// came from.
var ownAttributes = map[string]bool{
	AttrError: true, AttrOutcome: true, AttrStatusCode: true, AttrGRPCCode: true, AttrProbability: true,
	AttrAttempts: true, AttrFirst: true, AttrLast: true, AttrMessageID: true, AttrGroup: true, AttrPipeline: true,
	AttrRetryAfter: true, AttrReprocessRun: true, AttrParkedReason: true,
}

// deadLetterAttributes builds the attributes of a dead-letter message: this
// pipeline's (run, the reprocessing run's ID, "" for none), and then, as
// room allows in key order, those of the message the record came from
// (r.Attributes), within Pub/Sub's limits (at most 100 attributes, values
// at most 1024 bytes).
//
// Its attempts count this pass through the throttle as one at least, even
// when no call was made (the element was held until its wait ran out, or
// its payload was refused): every trip through a dead-letter topic counts
// toward --max_total_attempts, so a reprocessing run that reads its own
// dead letters parks each of them in the end. A message whose attempts
// attribute was malformed starts again from this pass.
func deadLetterAttributes(r throttle.Record, messageID, pipeline, run string) map[string]string {
	prior, err := strconv.Atoi(r.Attributes[AttrAttempts])
	if err != nil || prior < 0 {
		prior = 0
	}
	a := map[string]string{
		AttrError:       truncateUTF8(r.Error, pubsubio.MaxAttributeValueBytes),
		AttrOutcome:     string(r.Outcome),
		AttrProbability: strconv.FormatFloat(r.Probability, 'f', 4, 64),
		AttrAttempts:    strconv.Itoa(max(r.Attempts, prior+1)),
		AttrGroup:       truncateUTF8(r.Group, pubsubio.MaxAttributeValueBytes),
		AttrPipeline:    truncateUTF8(pipeline, pubsubio.MaxAttributeValueBytes),
	}
	if run != "" {
		a[AttrReprocessRun] = run
	}
	if r.StatusCode != 0 {
		a[AttrStatusCode] = strconv.Itoa(r.StatusCode)
	}
	if r.GRPCCode != 0 {
		a[AttrGRPCCode] = strconv.Itoa(r.GRPCCode)
	}
	if r.FirstAttempt != 0 {
		a[AttrFirst] = time.UnixMicro(r.FirstAttempt).UTC().Format(time.RFC3339Nano)
	}
	if r.LastAttempt != 0 {
		a[AttrLast] = time.UnixMicro(r.LastAttempt).UTC().Format(time.RFC3339Nano)
	}
	if r.RetryAfter != 0 {
		a[AttrRetryAfter] = strconv.FormatInt(r.RetryAfter, 10)
	}
	if messageID != "" {
		a[AttrMessageID] = truncateUTF8(messageID, pubsubio.MaxAttributeValueBytes)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Attributes)) {
		if len(a) >= pubsubio.MaxAttributes {
			break
		}
		if !ownAttributes[k] {
			a[k] = r.Attributes[k]
		}
	}
	return a
}

// truncateUTF8 makes s valid UTF-8 (Pub/Sub refuses anything else) and
// cuts it to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// resultToMessage turns a success into a message for --success_topic: the
// response as data, the original message ID as attribute.
func resultToMessage(r Result) pubsubio.Message {
	m := pubsubio.Message{Data: r.Response, AckID: r.Input.AckID}
	if r.Input.MessageID != "" {
		m.Attributes = map[string]string{AttrMessageID: r.Input.MessageID}
	}
	return m
}

// formatRejected renders a message Pub/Sub refused to accept (too large,
// too many attributes) as an error line, so it is written to the error
// file sink instead of failing the job forever.
func formatRejected(r pubsubio.Rejected) (string, error) {
	rec := throttle.Record{
		Input:     r.Message.Data,
		MessageID: r.Message.Attributes[AttrMessageID],
		Error:     "pipeline: cannot publish to Pub/Sub: " + r.Reason,
		Outcome:   throttle.OutcomeError,
	}
	if a := r.Message.Attributes; a != nil {
		rec.Attempts, _ = strconv.Atoi(a[AttrAttempts])
		if orig := a[AttrError]; orig != "" {
			rec.Error += "; original error: " + orig
		}
	}
	return formatRecord(rec)
}

// rejectedLine formats a refused message as an errors Line.
func rejectedLine(r pubsubio.Rejected) (Line, error) {
	text, err := formatRejected(r)
	return Line{Text: text, AckID: r.Message.AckID}, err
}

// pubsubEndpoint returns the emulator endpoint for o ("" = environment or
// production).
func (o Options) pubsubEndpoint() string { return o.PubSubHost }

// project returns the Pub/Sub project: --pubsub_project, else Beam's
// --project, else "beamthrottle-local" (for the emulator).
func (o Options) project() string {
	if o.Project != "" {
		return o.Project
	}
	if *gcpopts.Project != "" {
		return *gcpopts.Project
	}
	return "beamthrottle-local"
}

// readConfig is the Pub/Sub source's configuration in o: its subscription,
// acknowledged by ackDone once the outputs are written.
func (o Options) readConfig() pubsubio.ReadConfig {
	return pubsubio.ReadConfig{
		Project:      o.project(),
		Subscription: o.Subscription,
		Endpoint:     o.pubsubEndpoint(),
		IdleTimeout:  o.IdleTimeout,
		ManualAck:    true,
	}
}

// publishConfig is the configuration in o of publishing to topic.
func (o Options) publishConfig(topic string) pubsubio.PublishConfig {
	return pubsubio.PublishConfig{Project: o.project(), Topic: topic, Endpoint: o.pubsubEndpoint(), Timeout: o.PublishTimeout}
}

// ackConfig is the configuration in o of acknowledging the messages of its
// subscription (none when o.Subscription is "").
func (o Options) ackConfig() pubsubio.AckConfig {
	return pubsubio.AckConfig{Project: o.project(), Subscription: o.Subscription, Endpoint: o.pubsubEndpoint()}
}

// leaseTimeout bounds the look-up of the subscription's ack deadline at
// start.
const leaseTimeout = 30 * time.Second

// checkIdleTimeout warns, on warn, when --idle_timeout is shorter than the
// lease of the messages pulled from --subscription (pubsubio.Lease): a run
// started less than that after another stopped (killed, say) may find
// nothing while the messages that one held are still leased, stop, and
// report the subscription drained. It warns rather than refuses: a short
// idle timeout is right when no other run held messages (a fresh
// subscription, a restart after the lease ran out), and the lease, a
// minute, would otherwise be added to every such run. If the
// subscription's ack deadline cannot be read, it says so and compares with
// the reader's own lease.
func (o Options) checkIdleTimeout(ctx context.Context, warn io.Writer) {
	if o.Subscription == "" || o.IdleTimeout <= 0 || o.FreshSubscription {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, leaseTimeout)
	defer cancel()
	lease, err := pubsubio.Lease(ctx, o.readConfig())
	if err != nil {
		fmt.Fprintf(warn, "warning: --idle_timeout: cannot read the ack deadline of --subscription=%s (%v); comparing with the reader's lease (%v) only\n", o.Subscription, err, lease)
	}
	if o.IdleTimeout < lease {
		fmt.Fprintf(warn, "warning: --idle_timeout: %v is shorter than the lease of the messages pulled from --subscription=%s (%v): "+
			"if a run that stopped less than %v ago held some, this run may stop before they are delivered again and report the subscription drained; "+
			"after a crash, wait %v before starting it or use --idle_timeout=%v or more\n",
			o.IdleTimeout, o.Subscription, lease, lease, lease, lease)
	}
}

// fileSink is where a step writes the lines of an output: files under
// Prefix, written with WriteLines' Options.
type fileSink struct {
	Prefix  string
	Options []WriteOption
}

// files is the file sink of o.
func (o Options) files() fileSink { return fileSink{Prefix: o.OutputPrefix, Options: o.writeOptions()} }

// readSubscription is the Pub/Sub source: PCollection<Element>.
func readSubscription(s beam.Scope, cfg pubsubio.ReadConfig) (beam.PCollection, error) {
	msgs, err := pubsubio.TryRead(s, cfg)
	if err != nil {
		return beam.PCollection{}, fmt.Errorf("--subscription: %w", err)
	}
	return beam.ParDo(s, messageToElement, msgs), nil
}

// publish writes msgs as cfg says and sends the messages Pub/Sub can never
// accept to the errors files of rejected. It returns, as
// PCollection<string>, the ack IDs of the messages now durably written:
// published, or refused and written to the errors files.
func publish(s beam.Scope, cfg pubsubio.PublishConfig, rejected fileSink, msgs beam.PCollection) (beam.PCollection, error) {
	refused, published, err := pubsubio.TryPublishAcked(s, cfg, msgs)
	if err != nil {
		return beam.PCollection{}, err
	}
	beam.ParDo0(s, &countFn{Name: metricDeadLetterRejected}, refused)
	written := WriteLines(s, rejected.Prefix, OutErrors, beam.ParDo(s, rejectedLine, refused), rejected.Options...)
	return beam.Flatten(s, published, written), nil
}

// ackDone acknowledges the messages whose outputs are written (ack IDs in
// the done PCollections), when there is a subscription to acknowledge.
func ackDone(s beam.Scope, cfg pubsubio.AckConfig, done []beam.PCollection) error {
	if cfg.Subscription == "" || len(done) == 0 {
		return nil
	}
	return pubsubio.TryAck(s.Scope("Ack"), cfg, beam.Flatten(s, done...))
}
