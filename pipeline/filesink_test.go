package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// outputFiles returns the files of output name under prefix.
func outputFiles(t *testing.T, prefix, name string) []string {
	t.Helper()
	files, err := filepath.Glob(prefix + name + "-*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestBoundedRunWritesFewFiles: a bounded run of a few thousand elements
// through the whole pipeline writes at most DefaultShards files per output,
// and the files hold every input exactly once.
func TestBoundedRunWritesFewFiles(t *testing.T) {
	const n = 3000
	tests := []struct {
		name   string
		source func(t *testing.T, o *Options)
	}{
		{"generate", func(t *testing.T, o *Options) { o.Generate = n }},
		{"files", func(t *testing.T, o *Options) {
			dir := t.TempDir()
			for f := range 3 {
				var b strings.Builder
				for i := range n / 3 {
					fmt.Fprintf(&b, `{"id":%d}`+"\n", f*(n/3)+i)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("in-%d.jsonl", f)), []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o.Input = filepath.Join(dir, "in-*.jsonl")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Far over the quota, with some 500s: all four outputs get lines.
			srv, err := testserver.NewServer(testserver.Config{Quota: 200, Period: time.Second, ErrorRate: 0.2, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			o := baseOptions(t)
			o.CallerOptions.URL = srv.Endpoint()
			tt.source(t, &o)
			run(t, o)

			seen := map[string]int{}
			for _, name := range []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors} {
				files := outputFiles(t, o.OutputPrefix, name)
				lines := readLines(t, o.OutputPrefix, name)
				t.Logf("%s: %d lines in %d files", name, len(lines), len(files))
				if len(files) > DefaultShards {
					t.Errorf("%s: got %d files, want at most %d", name, len(files), DefaultShards)
				}
				if len(lines) == 0 {
					t.Errorf("%s: no lines; want all four outputs used", name)
				}
				for _, l := range lines {
					seen[l["input"].(string)]++
				}
			}
			for i := range n {
				in := fmt.Sprintf(`{"id":%d}`, i)
				if o.Generate > 0 {
					in = fmt.Sprintf(`{"id":%d,"text":"element-%d"}`, i, i)
				}
				if seen[in] != 1 {
					t.Errorf("input %s is in the outputs %d times, want 1", in, seen[in])
				}
			}
			if len(seen) != n {
				t.Errorf("outputs hold %d distinct inputs, want %d", len(seen), n)
			}
		})
	}
}

// TestWriteLines: WriteLines on bounded input writes at most one file per
// shard, every line exactly once, and emits the ack ID of every line; with
// a flush interval longer than the run it still writes everything when the
// input ends.
func TestWriteLines(t *testing.T) {
	const n = 2000
	tests := []struct {
		name      string
		opts      []WriteOption
		maxFiles  int
		wantFiles int // exactly, when every shard gets lines; 0: do not check
	}{
		{"default", nil, DefaultShards, DefaultShards},
		{"one shard", []WriteOption{WithShards(1)}, 1, 1},
		{"seven shards", []WriteOption{WithShards(7)}, 7, 7},
		{"flush interval longer than the run", []WriteOption{WithFlushInterval(time.Hour)}, DefaultShards, DefaultShards},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := t.TempDir() + "/"
			var lines, ids []any
			for i := range n {
				id := fmt.Sprintf("ack-%d", i)
				lines = append(lines, Line{Text: fmt.Sprintf(`{"i":%d}`, i), AckID: id})
				ids = append(ids, id)
			}
			p, s := beam.NewPipelineWithRoot()
			in := beam.Reshuffle(s, beam.Create(s, lines...)) // many bundles
			acks := WriteLines(s, prefix, "out", in, tt.opts...)
			passert.Equals(s, acks, ids...)
			if err := ptest.Run(p); err != nil {
				t.Fatal(err)
			}

			files := outputFiles(t, prefix, "out")
			if len(files) > tt.maxFiles || (tt.wantFiles > 0 && len(files) != tt.wantFiles) {
				t.Errorf("got %d files, want %d (at most %d)", len(files), tt.wantFiles, tt.maxFiles)
			}
			seen := map[float64]int{}
			for _, l := range readLines(t, prefix, "out") {
				seen[l["i"].(float64)]++
			}
			for i := range n {
				if seen[float64(i)] != 1 {
					t.Errorf("line %d written %d times, want 1", i, seen[float64(i)])
				}
			}
			if len(seen) != n {
				t.Errorf("%d distinct lines written, want %d", len(seen), n)
			}
		})
	}
}

// TestWriteLinesRefusesBadOptions: a bad option panics at construction,
// naming WriteLines.
func TestWriteLinesRefusesBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  WriteOption
	}{
		{"zero shards", WithShards(0)},
		{"negative shards", WithShards(-1)},
		{"negative flush interval", WithFlushInterval(-time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.HasPrefix(msg, "pipeline.WriteLines: ") {
					t.Errorf("got panic %v, want one starting with pipeline.WriteLines:", r)
				}
			}()
			_, s := beam.NewPipelineWithRoot()
			WriteLines(s, t.TempDir()+"/", "out", beam.Create(s, Line{Text: "x"}), tt.opt)
		})
	}
}

// TestShardFn: a bundle's lines go round-robin to the shards as chunks that
// keep every line and ack ID, in order per shard, none longer than
// maxChunkBytes plus one line.
func TestShardFn(t *testing.T) {
	big := strings.Repeat("x", maxChunkBytes/3)
	tests := []struct {
		name       string
		shards     int
		lines      int
		text       string
		wantChunks int
	}{
		{"one shard", 1, 10, "l", 1},
		{"three shards, ten lines", 3, 10, "l", 3},
		{"more shards than lines", 8, 3, "l", 3},
		{"chunks split at the size bound", 2, 12, big, 4}, // 6 lines a shard, 3 per chunk
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[int][]lineChunk{}
			emit := func(shard int, c lineChunk) { got[shard] = append(got[shard], c) }
			f := &shardFn{Shards: tt.shards}
			f.StartBundle(emit)
			var want []string
			for i := range tt.lines {
				text := fmt.Sprintf("%s-%d", tt.text, i)
				want = append(want, text)
				f.ProcessElement(Line{Text: text, AckID: fmt.Sprintf("ack-%d", i)}, emit)
			}
			f.FinishBundle(emit)

			chunks, seen := 0, map[string]bool{}
			var sizes []int
			for shard, cs := range got {
				if shard < 0 || shard >= tt.shards {
					t.Errorf("shard %d out of [0, %d)", shard, tt.shards)
				}
				n := 0
				for _, c := range cs {
					chunks++
					if len(c.Text) > maxChunkBytes+len(big)+10 {
						t.Errorf("chunk of %d bytes, want at most about %d", len(c.Text), maxChunkBytes)
					}
					lines := strings.Split(strings.TrimSuffix(c.Text, "\n"), "\n")
					if len(lines) != len(c.Acks) {
						t.Errorf("chunk of %d lines has %d ack IDs", len(lines), len(c.Acks))
					}
					for j, l := range lines {
						seen[l] = true
						if i := strings.LastIndex(l, "-"); j < len(c.Acks) && "ack"+l[i:] != c.Acks[j] {
							t.Errorf("line %q has ack ID %q", l, c.Acks[j])
						}
					}
					n += len(lines)
				}
				sizes = append(sizes, n)
			}
			if chunks != tt.wantChunks {
				t.Errorf("got %d chunks, want %d", chunks, tt.wantChunks)
			}
			for _, l := range want {
				if !seen[l] {
					t.Errorf("line %q in no chunk", l)
				}
			}
			if len(seen) != len(want) {
				t.Errorf("%d distinct lines in the chunks, want %d", len(seen), len(want))
			}
			for _, n := range sizes {
				if n < tt.lines/tt.shards || n > tt.lines/tt.shards+1 {
					t.Errorf("shard sizes %v: not round-robin", sizes)
					break
				}
			}
		})
	}
}
