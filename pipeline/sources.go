package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamthrottle/beamthrottle/internal/interrupt"
)

func init() {
	register.DoFn3x0[context.Context, []byte, func(Element)](&generateFn{})
	register.DoFn4x0[context.Context, beam.EventTime, []byte, func(Element)](&tickFn{})
	register.DoFn4x2[*sdf.ManualWatermarkEstimator, *sdf.LockRTracker, int64, func(beam.EventTime, []byte),
		sdf.ProcessContinuation, error](&tickSourceFn{})
	register.Emitter2[beam.EventTime, []byte]()
	register.DoFn2x0[string, func(Element)](&lineFn{})
	register.Emitter1[Element]()
}

// Generate is the built-in bounded source of n synthetic JSON elements
// {"id":i,"text":"element-i"}, for demos and benchmarks.
func Generate(s beam.Scope, n int) beam.PCollection {
	s = s.Scope("pipeline.Generate")
	return beam.Reshuffle(s, beam.ParDo(s, &generateFn{N: n}, beam.Impulse(s)))
}

// GenerateStream is the built-in unbounded source: about n synthetic JSON
// elements at rate elements per second, starting now (a streaming pipeline
// that ends by itself), for soak tests and live demos. Elements come in
// bursts every 100 ms (or every 1/rate when slower), which keeps the
// runner's per-tick overhead small.
func GenerateStream(s beam.Scope, n int, rate float64) beam.PCollection {
	s = s.Scope("pipeline.GenerateStream")
	interval := max(100*time.Millisecond, time.Duration(float64(time.Second)/rate))
	perTick := max(1, int(rate*interval.Seconds()+0.5))
	ticks := (n + perTick - 1) / perTick
	impulses := beam.ParDo(s, &tickSourceFn{Start: time.Now().UnixMilli(), Interval: interval}, beam.Create(s, int64(ticks)))
	return beam.ParDo(s, &tickFn{PerTick: perTick}, impulses)
}

// tickSourceFn is GenerateStream's clock, as Beam's periodic.Impulse but
// for an interrupt: a splittable DoFn over the tick numbers [0, n) of its
// input n that emits tick i, an empty impulse, at Start + i×Interval (its
// event time too), each once that time has come. It ends early, emitting
// nothing more, when the pipeline is interrupted in its process (see
// package internal/interrupt).
type tickSourceFn struct {
	Start    int64 // unix milliseconds of tick 0
	Interval time.Duration
}

func (f *tickSourceFn) CreateInitialRestriction(n int64) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: n}
}

func (f *tickSourceFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(r))
}

func (f *tickSourceFn) RestrictionSize(_ int64, r offsetrange.Restriction) float64 {
	return float64(r.Size())
}

func (f *tickSourceFn) SplitRestriction(_ int64, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

// TruncateRestriction ends the ticks when the runner drains the job.
func (f *tickSourceFn) TruncateRestriction(*sdf.LockRTracker, int64) offsetrange.Restriction {
	return offsetrange.Restriction{}
}

func (f *tickSourceFn) CreateWatermarkEstimator() *sdf.ManualWatermarkEstimator {
	return &sdf.ManualWatermarkEstimator{}
}

// at is the time of tick i.
func (f *tickSourceFn) at(i int64) time.Time {
	return time.UnixMilli(f.Start).Add(time.Duration(i) * f.Interval)
}

func (f *tickSourceFn) ProcessElement(we *sdf.ManualWatermarkEstimator, rt *sdf.LockRTracker, _ int64, emit func(beam.EventTime, []byte)) (sdf.ProcessContinuation, error) {
	r := rt.GetRestriction().(offsetrange.Restriction)
	for i := r.Start; ; i++ {
		if interrupt.Is() {
			rt.TryClaim(r.End) // claims the rest, emitting nothing
			return sdf.StopProcessing(), rt.GetError()
		}
		at := f.at(i)
		if wait := time.Until(at); wait > 0 {
			we.UpdateWatermark(at)
			return sdf.ResumeProcessingIn(wait), nil
		}
		if !rt.TryClaim(i) {
			return sdf.StopProcessing(), rt.GetError()
		}
		emit(mtime.FromTime(at), []byte{})
		we.UpdateWatermark(f.at(i + 1))
	}
}

// tickFn turns a periodic impulse into PerTick synthetic elements, unique
// by the tick's event time (unix milliseconds; the impulse's bytes are
// empty) and their index in the tick.
type tickFn struct{ PerTick int }

func (f *tickFn) ProcessElement(ctx context.Context, ts beam.EventTime, _ []byte, emit func(Element)) {
	generatedCounter.Inc(ctx, int64(f.PerTick))
	for i := range f.PerTick {
		emit(Element{Data: fmt.Appendf(nil, `{"tick":%d,"i":%d}`, ts.Milliseconds(), i)})
	}
}

// generatedCounter counts the elements the built-in generators emitted.
var generatedCounter = beam.NewCounter(metricsNamespace, metricGenerated)

type generateFn struct{ N int }

func (f *generateFn) ProcessElement(ctx context.Context, _ []byte, emit func(Element)) {
	generatedCounter.Inc(ctx, int64(f.N))
	for i := range f.N {
		emit(Element{Data: fmt.Appendf(nil, `{"id":%d,"text":"element-%d"}`, i, i)})
	}
}

// ReadFiles is the bounded source of text or JSONL files matching glob
// (local paths or gs://): one element per non-empty line, the line's bytes
// as the payload, unchanged. A line ends at "\n" or "\r\n" (files written
// on Windows), and the line end is not part of the payload; a line that is
// empty without its line end is skipped. Lines are not parsed, so a
// malformed JSON line reaches the caller as it is and the API's answer
// decides its outcome.
func ReadFiles(s beam.Scope, glob string) beam.PCollection {
	s = s.Scope("pipeline.ReadFiles")
	return beam.ParDo(s, &lineFn{}, textio.Read(s, glob))
}

// lineFn turns a line read by textio (which splits at "\n" and keeps a
// "\r" before it) into an Element without that "\r" (a last line ending
// in "\r" loses it too, as with bufio.ScanLines); empty lines are not
// elements.
type lineFn struct{}

func (lineFn) ProcessElement(line string, emit func(Element)) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return
	}
	emit(Element{Data: []byte(line)})
}
