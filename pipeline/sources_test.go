package pipeline

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/beamthrottle/beamthrottle/internal/interrupt"
)

func init() { register.Function1x1(elementData) }

func elementData(e Element) string { return string(e.Data) }

// TestGenerateStreamUnique: the streaming generator's elements are all
// distinct (they used to repeat every tick), so a harness can tell them
// apart in the outputs.
func TestGenerateStreamUnique(t *testing.T) {
	const n = 30 // 3 ticks of 10 at 100/s
	p, s := beam.NewPipelineWithRoot()
	data := beam.ParDo(s, elementData, GenerateStream(s, n, 100))
	passert.Count(s, data, "elements", n)
	passert.Count(s, stats.Count(s, data), "distinct elements", n)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestGenerateStreamInterrupted: an interrupted streaming generator stops
// at once and emits nothing more, so its pipeline ends (uninterrupted, this
// one would emit 100 elements over 10 s).
func TestGenerateStreamInterrupted(t *testing.T) {
	end := interrupt.Begin()
	defer end()
	p, s := beam.NewPipelineWithRoot()
	passert.Count(s, GenerateStream(s, 100, 10), "elements", 0)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
