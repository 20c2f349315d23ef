package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	register.DoFn5x0[context.Context, Element, func(Element), func(Element), func(throttle.Record)](&parkFn{})
	register.Function1x2[Element, string, error](formatParked)
	register.Function1x2[Element, Line, error](parkedLine)
	register.Function1x1[Element, pubsubio.Message](parkedMessage)
	register.DoFn2x0[context.Context, beam.T](&countFn{})
	register.DoFn4x0[context.Context, Element, func(Element), func(throttle.Record)](&payloadCheckFn{})
}

// Counters of the pipeline itself (namespace beamthrottle.pipeline).
var (
	parkedCounter      = beam.NewCounter(metricsNamespace, OutParked)
	reprocessedCounter = beam.NewCounter(metricsNamespace, metricReprocessed)
	malformedCounter   = beam.NewCounter(metricsNamespace, metricMalformed)
	badInputCounter    = beam.NewCounter(metricsNamespace, metricBadInput)
)

// AttrParkedReason is added to a parked message's attributes.
const AttrParkedReason = "parked_reason"

// AttrReprocessRun is an attribute of the dead-letter messages a
// reprocessing run writes: that run's ID, unique per run. A run that reads
// a message carrying its own ID (its subscription is on its own dead-letter
// topic) knows it has read that message before.
const AttrReprocessRun = "reprocess_run"

// rereadCounters count, by the output of the earlier pass, the messages a
// reprocessing run read again from its own dead letters; the summary moves
// them out of that output (see Summary.Reread).
var rereadCounters = map[string]beam.Counter{
	OutClientThrottled: beam.NewCounter(metricsNamespace, rereadPrefix+OutClientThrottled),
	OutServerThrottled: beam.NewCounter(metricsNamespace, rereadPrefix+OutServerThrottled),
	OutErrors:          beam.NewCounter(metricsNamespace, rereadPrefix+OutErrors),
}

// rereadPrefix starts the names of rereadCounters.
const rereadPrefix = "reread_"

// Reprocess adds the reprocessing pipeline to s: it reads the dead-letter
// subscription o.Subscription and sends each payload through the throttle
// again to the normal outputs. The payload reaching the caller is the
// original one (no re-wrapping); its "attempts" attribute is carried
// forward and incremented. A message whose attempts reached
// o.MaxTotalAttempts is not called again but parked (o.ParkedTopic, else
// files <output_prefix>parked-*.jsonl) with all its attributes, so nothing
// loops forever and nothing is lost. A message with a malformed attempts
// attribute goes to the errors output. With o.IdleTimeout > 0 the run
// drains the subscription and stops once it has been idle that long.
//
// When the subscription is on the dead-letter topic the run writes to, the
// run reads its own dead letters again: they cycle, their attempts growing,
// until they succeed, are parked, or the run stops reading. Its dead
// letters carry the run's ID (AttrReprocessRun), so the run counts each
// message once, under its last outcome (see Summary.Reread).
func Reprocess(s beam.Scope, o Options) (Outputs, error) {
	s = s.Scope("pipeline.Reprocess")
	if o.Subscription == "" {
		return Outputs{}, fmt.Errorf("--subscription: reprocessing reads the dead-letter subscription; none given")
	}
	in, err := readSubscription(s, o.readConfig())
	if err != nil {
		return Outputs{}, err
	}
	o.reprocessRun = uuid.NewString()
	again, parked, malformed := beam.ParDo3(s, &parkFn{MaxTotalAttempts: o.MaxTotalAttempts, Run: o.reprocessRun, Monitor: o.monitor}, in)
	var parkedDone beam.PCollection
	if o.ParkedTopic != "" {
		if parkedDone, err = publish(s, o.publishConfig(o.ParkedTopic), o.files(), beam.ParDo(s, parkedMessage, parked)); err != nil {
			return Outputs{}, fmt.Errorf("--parked_topic: %w", err)
		}
	} else {
		parkedDone = WriteLines(s, o.OutputPrefix, OutParked, beam.ParDo(s, parkedLine, parked), o.writeOptions()...)
	}
	return throttleAndWrite(s, again, o, []beam.PCollection{malformed}, []beam.PCollection{parkedDone})
}

// parkFn splits reprocessed elements: those to try again, those past the
// attempt cap (parked) and those whose attempts attribute is malformed. It
// counts the messages read, and apart from them the messages this run
// dead-lettered itself and reads again (their AttrReprocessRun is Run), and
// counts the parked ones, and those read again, in the run's Monitor.
type parkFn struct {
	MaxTotalAttempts int
	Run              string
	Monitor          string // the ID of the run, its Monitor's key

	m Monitor
}

func (f *parkFn) Setup() { f.m = lookupMonitor(f.Monitor) }

func (f *parkFn) ProcessElement(ctx context.Context, e Element, again, parked func(Element), malformed func(throttle.Record)) {
	if f.Run != "" && e.Attributes[AttrReprocessRun] == f.Run {
		// Read before by this run, whose outcome then (in the message's
		// outcome attribute) was not its last: it moves to the new one.
		prev := outputOf(throttle.Outcome(e.Attributes[AttrOutcome]))
		rereadCounters[prev].Inc(ctx, 1)
		f.m.Written(prev, -1)
	} else {
		reprocessedCounter.Inc(ctx, 1)
	}
	switch {
	case e.Attempts < 0:
		malformedCounter.Inc(ctx, 1) // Monitor: counted by failureLineFn
		malformed(errorRecord(e, fmt.Sprintf("pipeline: dead-letter message %s has a malformed %q attribute %q", e.MessageID, AttrAttempts, e.Attributes[AttrAttempts])))
	case e.Attempts >= f.MaxTotalAttempts:
		parkedCounter.Inc(ctx, 1)
		f.m.Written(OutParked, 1)
		parked(e)
	default:
		again(e)
	}
}

// parkedJSON is a line of the parked file sink.
type parkedJSON struct {
	Input      string            `json:"input"`
	Encoding   string            `json:"input_encoding,omitempty"`
	MessageID  string            `json:"message_id,omitempty"`
	Attempts   int               `json:"attempts"`
	Reason     string            `json:"reason"`
	Attributes map[string]string `json:"attributes,omitempty"`
}

func parkReason(e Element) string {
	return fmt.Sprintf("%d attempts reached --max_total_attempts", e.Attempts)
}

func formatParked(e Element) (string, error) {
	j := parkedJSON{MessageID: e.MessageID, Attempts: e.Attempts, Reason: parkReason(e), Attributes: e.Attributes}
	j.Input, j.Encoding = textOrBase64(e.Data)
	b, err := json.Marshal(j)
	return string(b), err
}

// parkedLine formats a parked element as a Line.
func parkedLine(e Element) (Line, error) {
	text, err := formatParked(e)
	return Line{Text: text, AckID: e.AckID}, err
}

// parkedMessage is a parked element as a message: the payload unchanged
// with all its attributes, plus the reason.
func parkedMessage(e Element) pubsubio.Message {
	attrs := make(map[string]string, len(e.Attributes)+1)
	for k, v := range e.Attributes {
		attrs[k] = v
	}
	if len(attrs) < pubsubio.MaxAttributes {
		attrs[AttrParkedReason] = parkReason(e)
	}
	return pubsubio.Message{Data: e.Data, Attributes: attrs, AckID: e.AckID}
}

// countFn counts its input elements in a pipeline counter.
type countFn struct {
	Name string
	c    beam.Counter
}

func (f *countFn) ProcessElement(ctx context.Context, _ beam.T) {
	if f.c == (beam.Counter{}) {
		f.c = beam.NewCounter(metricsNamespace, f.Name)
	}
	f.c.Inc(ctx, 1)
}

// payloadCheckFn sends elements whose payload cannot be sent to the errors
// output without a call: an empty payload, one larger than Max bytes (when
// Max > 0), and, when JSON is set, one that is not valid JSON.
type payloadCheckFn struct {
	Max  int
	JSON bool
}

func (f *payloadCheckFn) ProcessElement(ctx context.Context, e Element, ok func(Element), bad func(throttle.Record)) {
	var msg string
	switch {
	case len(e.Data) == 0:
		msg = "pipeline: empty payload"
	case f.Max > 0 && len(e.Data) > f.Max:
		msg = fmt.Sprintf("pipeline: payload of %d bytes exceeds --max_payload_bytes=%d", len(e.Data), f.Max)
	case f.JSON && !json.Valid(e.Data):
		var v any
		err := json.Unmarshal(e.Data, &v)
		if err == nil {
			err = errors.New("not valid UTF-8 JSON")
		}
		msg = "pipeline: malformed JSON line (--input_format=jsonl): " + err.Error()
	default:
		ok(e)
		return
	}
	badInputCounter.Inc(ctx, 1) // Monitor: counted by failureLineFn
	bad(errorRecord(e, msg))
}
