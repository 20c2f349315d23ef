package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamthrottle/beamthrottle/internal/report"
	"github.com/beamthrottle/beamthrottle/pipeline"
)

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, "prism")
}

// testConfig runs the demo's pipelines validated and on Prism, without
// cmd/beamthrottle's checks of the environment and summary table, and
// appends each run's summary to sums (if not nil).
func testConfig(stdout io.Writer, sums *[]pipeline.Summary) Config {
	return Config{
		RunPipeline: func(ctx context.Context, o pipeline.Options, p *report.Progress) (pipeline.Summary, error) {
			if err := o.Validate(); err != nil {
				return pipeline.Summary{}, err
			}
			s, err := pipeline.Run(ctx, o, p)
			if sums != nil {
				*sums = append(*sums, s)
			}
			return s, err
		},
		Stdout: stdout,
		Stderr: os.Stderr,
	}
}

// demoFlags returns the flags' default Options with n generated elements.
func demoFlags(t *testing.T, n int) pipeline.Options {
	t.Helper()
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	o := pipeline.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	o.Generate = n
	return *o
}

// TestDemo runs the make-run demo end to end on a smaller input and a lower
// quota: run 1 (the SRE rule, routing) writes all four outputs and
// dead-letters exactly its throttled elements, run 2 (paced) reprocesses
// exactly those and every one succeeds, and the demo's accounting holds.
// The quota is low enough that the first firings alone (4 groups x 50
// calls, sent back to back) exceed it several times over, so run 1 is
// throttled on any machine speed; only counts are checked.
func TestDemo(t *testing.T) {
	const n = 400
	o := demoFlags(t, n)
	dir := t.TempDir()
	t.Chdir(dir)
	var out bytes.Buffer
	var sums []pipeline.Summary
	c := testConfig(&out, &sums)
	c.Quota = 20
	if err := Run(context.Background(), o, c); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if len(sums) != 2 {
		t.Fatalf("got %d runs, want 2", len(sums))
	}
	s1, s2 := sums[0], sums[1]
	for _, c := range []struct {
		name string
		got  int64
	}{
		{"run 1 success", s1.Success}, {"run 1 client_throttled", s1.ClientThrottled},
		{"run 1 server_throttled", s1.ServerThrottled},
	} {
		if c.got == 0 {
			t.Errorf("%s: got 0, want some", c.name)
		}
	}
	if s1.Errors != demoMalformed {
		t.Errorf("run 1 errors: got %d, want %d (the malformed lines)", s1.Errors, demoMalformed)
	}
	if got := s1.Total(); got != n+demoMalformed {
		t.Errorf("run 1 accounted for %d elements, want %d", got, n+demoMalformed)
	}
	dead := s1.ClientThrottled + s1.ServerThrottled
	if s2.Reprocessed != dead {
		t.Errorf("run 2 reprocessed %d dead letters, want the %d of run 1", s2.Reprocessed, dead)
	}
	if s2.Success != dead || s2.Total() != dead {
		t.Errorf("run 2: %d success of %d accounted for, want all %d dead letters to succeed", s2.Success, s2.Total(), dead)
	}
	// The outputs on disk: run 1 wrote every output, run 2 only successes.
	for _, c := range []struct {
		run, output string
		want        int64
	}{
		{"run1", pipeline.OutSuccess, s1.Success}, {"run1", pipeline.OutClientThrottled, s1.ClientThrottled},
		{"run1", pipeline.OutServerThrottled, s1.ServerThrottled}, {"run1", pipeline.OutErrors, s1.Errors},
		{"run2", pipeline.OutSuccess, dead},
	} {
		if got := countLines(t, filepath.Join(dir, "out", c.run, c.output+"-*.jsonl")); got != c.want {
			t.Errorf("%s %s: got %d lines, want %d", c.run, c.output, got, c.want)
		}
	}
	for _, want := range []string{"== run 1: the original tool's rule", "are on the dead-letter topic",
		"== run 2: --reprocess the dead-letter subscription", "calls sent", "429s",
		"all 405 original elements accounted for exactly once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}

// countLines counts the lines of the files matching glob.
func countLines(t *testing.T, glob string) int64 {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			n++
		}
		f.Close()
	}
	return n
}

// TestWriteInput: the demo's input holds n JSON elements and the malformed
// lines, spread among them.
func TestWriteInput(t *testing.T) {
	for _, c := range []struct{ n, bad int }{{10, 0}, {10, 3}, {5000, 5}, {2, 5}} {
		path := filepath.Join(t.TempDir(), "in.jsonl")
		got, err := writeInput(path, c.n, c.bad)
		if err != nil {
			t.Fatal(err)
		}
		if got != int64(c.n+c.bad) {
			t.Errorf("writeInput(%d, %d) = %d, want %d", c.n, c.bad, got, c.n+c.bad)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		valid, malformed := 0, 0
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if json.Valid([]byte(line)) {
				valid++
			} else {
				malformed++
			}
		}
		if valid != c.n || malformed != c.bad {
			t.Errorf("writeInput(%d, %d): %d JSON lines and %d malformed, want %d and %d", c.n, c.bad, valid, malformed, c.n, c.bad)
		}
	}
}
