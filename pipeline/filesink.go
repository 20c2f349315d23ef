package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/google/uuid"
)

func init() {
	register.DoFn2x0[Line, func(int, Line)](&shardFn{})
	register.DoFn4x1[context.Context, int, func(*Line) bool, func(string), error](&writeShardFn{})
	register.Emitter2[int, Line]()
	register.Iter1[Line]()
}

// WriteLines writes lines (PCollection<Line>) as files
// <prefix><name>-<uuid>.jsonl, each line's Text followed by a newline, and
// returns, as PCollection<string>, the ack IDs of the lines whose file is in
// place: their messages can be acknowledged. prefix may be a local path or
// a gs:// URL.
//
// Lines are spread round-robin over a few shards (WithShards, default
// DefaultShards) and grouped by shard, in the manner of Beam's file sinks
// with a fixed number of shards: each shard writes one file per window and
// firing. A bounded input in the global window thus gives at most
// DefaultShards files per output, written at the end of the run; an
// unbounded input needs WithFlushInterval, which writes a file per shard
// about every interval while lines arrive.
//
// A file is written under a temporary name and renamed into place; only
// then are its lines' ack IDs emitted. Any write, close or rename error
// fails the bundle so the runner retries it; a retried bundle writes a file
// of a new name, so a file in place is never overwritten (at least once:
// a line may be in two files, never in none).
//
// A shard's lines of one firing are held by the runner until they are
// written: in memory on Prism, for a bounded input the whole output.
//
//	acks := pipeline.WriteLines(s, "gs://bucket/out/", "success", lines,
//		pipeline.WithFlushInterval(time.Minute))
//
// WriteLines panics on a bad option.
func WriteLines(s beam.Scope, prefix, name string, lines beam.PCollection, opts ...WriteOption) beam.PCollection {
	s = s.Scope("pipeline.WriteLines." + name)
	cfg := writeConfig{shards: DefaultShards}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.check(); err != nil {
		panic(fmt.Sprintf("pipeline.WriteLines: %v", err))
	}
	keyed := beam.ParDo(s, &shardFn{Shards: cfg.shards}, lines)
	if cfg.flush > 0 {
		keyed = beam.WindowInto(s, window.NewGlobalWindows(), keyed,
			beam.Trigger(trigger.Repeat(trigger.AfterProcessingTime().PlusDelay(cfg.flush))),
			beam.PanesDiscard())
	}
	acks := beam.ParDo(s, &writeShardFn{Prefix: prefix, Name: name}, beam.GroupByKey(s, keyed))
	if cfg.flush > 0 {
		// Back to the default trigger, so the ack IDs flatten with those of
		// the other sinks.
		acks = beam.WindowInto(s, window.NewGlobalWindows(), acks)
	}
	return acks
}

// shardFn keys lines by shard, round-robin from a random shard per bundle,
// so that shards stay even whether bundles are large or hold one line.
type shardFn struct {
	Shards int

	next int
}

func (f *shardFn) StartBundle(_ func(int, Line)) {
	f.next = rand.IntN(f.Shards)
}

func (f *shardFn) ProcessElement(line Line, emit func(int, Line)) {
	emit(f.next, line)
	f.next = (f.next + 1) % f.Shards
}

// writeShardFn writes the lines of one shard and firing to one file.
type writeShardFn struct {
	Prefix string
	Name   string

	fs filesystem.Interface
}

func (f *writeShardFn) Setup(ctx context.Context) error {
	fs, err := filesystem.New(ctx, f.Prefix+f.Name)
	if err != nil {
		return fmt.Errorf("pipeline: output %s: %w", f.Prefix, err)
	}
	f.fs = fs
	return nil
}

func (f *writeShardFn) ProcessElement(ctx context.Context, _ int, lines func(*Line) bool, emitAck func(string)) error {
	final := fmt.Sprintf("%s%s-%s.jsonl", f.Prefix, f.Name, uuid.NewString())
	tmp := final + ".tmp"
	acks, err := f.write(ctx, tmp, lines)
	if err != nil {
		f.remove(ctx, tmp)
		return err
	}
	if err := filesystem.Rename(ctx, f.fs, tmp, final); err != nil {
		f.remove(ctx, tmp)
		return fmt.Errorf("pipeline: rename %s: %w", tmp, err)
	}
	for _, id := range acks {
		emitAck(id)
	}
	return nil
}

// write writes lines to path and closes it, returning the lines' ack IDs.
func (f *writeShardFn) write(ctx context.Context, path string, lines func(*Line) bool) ([]string, error) {
	w, err := f.fs.OpenWrite(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: open %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var acks []string
	var line Line
	for lines(&line) {
		bw.WriteString(line.Text)
		if err := bw.WriteByte('\n'); err != nil { // a bufio.Writer keeps its first error
			w.Close()
			return nil, fmt.Errorf("pipeline: write %s: %w", path, err)
		}
		if line.AckID != "" {
			acks = append(acks, line.AckID)
		}
	}
	if err := bw.Flush(); err != nil {
		w.Close()
		return nil, fmt.Errorf("pipeline: write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("pipeline: close %s: %w", path, err)
	}
	return acks, nil
}

// remove deletes a temporary file left by a failed write, if it can; the
// bundle fails anyway and its retry writes a file of another name.
func (f *writeShardFn) remove(ctx context.Context, path string) {
	if rm, ok := f.fs.(filesystem.Remover); ok {
		rm.Remove(ctx, path)
	}
}

func (f *writeShardFn) Teardown() error {
	if f.fs != nil {
		return f.fs.Close()
	}
	return nil
}
