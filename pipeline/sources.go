package pipeline

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn2x0[[]byte, func(Element)](&generateFn{})
	register.DoFn2x0[string, func(Element)](&lineFn{})
	register.Emitter1[Element]()
}

// Generate is the built-in bounded source of n synthetic JSON elements
// {"id":i,"text":"element-i"}, for demos and benchmarks.
func Generate(s beam.Scope, n int) beam.PCollection {
	s = s.Scope("pipeline.Generate")
	return beam.Reshuffle(s, beam.ParDo(s, &generateFn{N: n}, beam.Impulse(s)))
}

type generateFn struct{ N int }

func (f *generateFn) ProcessElement(_ []byte, emit func(Element)) {
	for i := range f.N {
		emit(Element{Data: fmt.Appendf(nil, `{"id":%d,"text":"element-%d"}`, i, i)})
	}
}

// ReadFiles is the bounded source of text or JSONL files matching glob
// (local paths or gs://): one element per non-empty line, the line's bytes
// as the payload, unchanged. Lines are not parsed, so a malformed JSON line
// reaches the caller as it is and the API's answer decides its outcome.
func ReadFiles(s beam.Scope, glob string) beam.PCollection {
	s = s.Scope("pipeline.ReadFiles")
	return beam.ParDo(s, &lineFn{}, textio.Read(s, glob))
}

type lineFn struct{}

func (lineFn) ProcessElement(line string, emit func(Element)) {
	if line == "" {
		return
	}
	emit(Element{Data: []byte(line)})
}
