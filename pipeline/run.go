package pipeline

import (
	"context"
	"flag"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// Run builds the pipeline for o and runs it on the runner chosen by Beam's
// --runner flag (default prism; see throttle.AvoidPrismSplits). While it
// runs, p (nil for none) counts the elements written per output and writes
// its progress line (see Progress); it returns the run's Summary.
func Run(ctx context.Context, o Options, p *Progress) (Summary, error) {
	detach := p.attach(&o)
	defer detach()
	pl, s := beam.NewPipelineWithRoot()
	if _, err := Build(s, o); err != nil {
		return Summary{}, err
	}
	total := int64(o.Generate)
	if total == 0 {
		total = -1
	}
	defer p.report(total)()
	throttle.AvoidPrismSplits()
	res, err := beamx.RunWithMetrics(ctx, pl)
	if err != nil {
		return Summary{}, fmt.Errorf("pipeline: run: %w", err)
	}
	if !waited() {
		return Summary{}, nil
	}
	return SummaryFrom(res), nil
}

// Submitted reports whether Run returned after submitting the job rather
// than after running it (so its Summary is empty).
func Submitted() bool { return !waited() }

// waited reports whether the runner waited for the job to end, so that its
// result holds the job's metrics. The Dataflow runner returns once the job is
// submitted (--async) or written as a template (--template_location, which
// the Flex Template launcher passes), with a result that has no metrics: its
// Metrics method dereferences a nil pointer.
func waited() bool {
	if *jobopts.Async {
		return false
	}
	if f := flag.Lookup("template_location"); f != nil && f.Value.String() != "" {
		return false
	}
	return true
}
