package demo

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, "prism")
}

// testConfig runs the demo's pipelines validated and on Prism, without
// cmd/beamthrottle's checks of the environment and summary table.
func testConfig(stdout io.Writer) Config {
	return Config{
		RunPipeline: func(ctx context.Context, o pipeline.Options, p *pipeline.Progress) (pipeline.Summary, error) {
			if err := o.Validate(); err != nil {
				return pipeline.Summary{}, err
			}
			return pipeline.Run(ctx, o, p)
		},
		Stdout: stdout,
		Stderr: os.Stderr,
	}
}

// TestDemo runs the make-run demo end to end on a smaller input: both runs,
// the dead-letter round trip, and the accounting check it ends with.
func TestDemo(t *testing.T) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	o := pipeline.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	o.Generate = 800
	o.OutputPrefix = t.TempDir() + "/"
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	if err := Run(context.Background(), *o, testConfig(&out)); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{"== run 1: 800 elements", "throttled payloads are on the dead-letter topic",
		"reprocess the dead-letter subscription", "all 800 original elements accounted for exactly once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
