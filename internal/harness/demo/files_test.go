package demo

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

// TestDemoWritesFewFiles: the demo's first run (bounded) writes at most
// pipeline.DefaultShards files per output. The second run drains a
// subscription, a streaming source whose files are finalised every
// pipeline.DefaultFlushInterval; its count depends on how long it runs, so
// it is only logged.
func TestDemoWritesFewFiles(t *testing.T) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	o := pipeline.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	o.Generate = 2000
	dir := t.TempDir()
	t.Chdir(dir) // the demo writes under out/ unless --output_prefix is given
	var out bytes.Buffer
	if err := Run(context.Background(), *o, testConfig(&out, nil)); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	outputs := []string{pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled,
		pipeline.OutErrors, pipeline.OutParked}
	for _, run := range []string{"run1", "run2"} {
		for _, name := range outputs {
			files, err := filepath.Glob(filepath.Join(dir, "out", run, name+"-*.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: %d files", run, name, len(files))
			if run == "run1" && len(files) > pipeline.DefaultShards {
				t.Errorf("%s %s: got %d files, want at most %d", run, name, len(files), pipeline.DefaultShards)
			}
		}
	}
}
