package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/periodic"
)

func init() {
	register.DoFn3x0[context.Context, []byte, func(Element)](&generateFn{})
	register.DoFn4x0[context.Context, beam.EventTime, []byte, func(Element)](&tickFn{})
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
	start := time.Now()
	impulses := periodic.Impulse(s, start, start.Add(time.Duration(ticks)*interval), interval, false)
	return beam.ParDo(s, &tickFn{PerTick: perTick}, impulses)
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
