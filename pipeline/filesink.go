package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window/trigger"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/google/uuid"
)

func init() {
	register.DoFn2x0[Line, func(int, lineChunk)](&shardFn{})
	register.DoFn4x1[context.Context, int, func(*lineChunk) bool, func(string), error](&writeShardFn{})
	register.Emitter2[int, lineChunk]()
	register.Iter1[lineChunk]()
	beam.RegisterType(reflect.TypeOf((*lineChunk)(nil)).Elem())
}

// maxChunkBytes bounds the text of one lineChunk.
const maxChunkBytes = 1 << 20

// lineChunk is consecutive lines of one shard from one bundle: their text,
// each line followed by a newline, and their non-empty ack IDs. Grouping
// chunks rather than lines keeps the runner's per-element work small (on
// Prism, a pending aggregation costs time per element each time the
// watermark moves).
type lineChunk struct {
	Text string
	Acks []string
}

// WriteLines writes lines (PCollection<Line>) as files
// <prefix><name>-<uuid>.jsonl, each line's Text followed by a newline, and
// returns, as PCollection<string>, the ack IDs of the lines whose file is in
// place: their messages can be acknowledged. prefix may be a local path or
// a gs:// URL.
//
// Lines are spread round-robin over a few shards (WithShards, default
// DefaultShards) and grouped by shard in the global window, in the manner
// of Beam's file sinks with a fixed number of shards: each shard writes one
// file per firing. A bounded input thus gives at most DefaultShards files,
// written when the input ends; an unbounded input needs WithFlushInterval,
// which writes a file per shard about every interval while lines arrive.
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
	var wopts []beam.WindowIntoOption
	if cfg.flush > 0 {
		wopts = append(wopts, beam.Trigger(trigger.Repeat(trigger.AfterProcessingTime().PlusDelay(cfg.flush))),
			beam.PanesDiscard())
	}
	// shardFn emits chunks at the end of its bundles, which puts them in the
	// global window: the lines go there first.
	lines = beam.WindowInto(s, window.NewGlobalWindows(), lines, wopts...)
	chunks := beam.ParDo(s, &shardFn{Shards: cfg.shards}, lines)
	acks := beam.ParDo(s, &writeShardFn{Prefix: prefix, Name: name}, beam.GroupByKey(s, chunks))
	if cfg.flush > 0 {
		// Back to the default trigger, so the ack IDs flatten with those of
		// the other sinks.
		acks = beam.WindowInto(s, window.NewGlobalWindows(), acks)
	}
	return acks
}

// shardFn collects a bundle's lines into one chunk per shard, round-robin
// from a random shard per bundle, so that shards stay even whether bundles
// are large or hold one line. It emits a chunk when it reaches
// maxChunkBytes and the rest when the bundle finishes.
type shardFn struct {
	Shards int

	next   int
	chunks []lineChunk
	texts  []strings.Builder
}

func (f *shardFn) StartBundle(_ func(int, lineChunk)) {
	f.next = rand.IntN(f.Shards)
	f.chunks = make([]lineChunk, f.Shards)
	f.texts = make([]strings.Builder, f.Shards)
}

func (f *shardFn) ProcessElement(line Line, emit func(int, lineChunk)) {
	i := f.next
	f.next = (f.next + 1) % f.Shards
	f.texts[i].WriteString(line.Text)
	f.texts[i].WriteByte('\n')
	if line.AckID != "" {
		f.chunks[i].Acks = append(f.chunks[i].Acks, line.AckID)
	}
	if f.texts[i].Len() >= maxChunkBytes {
		f.flush(i, emit)
	}
}

func (f *shardFn) FinishBundle(emit func(int, lineChunk)) {
	for i := range f.chunks {
		f.flush(i, emit)
	}
}

// flush emits shard i's chunk, if it holds lines, and starts a new one.
func (f *shardFn) flush(i int, emit func(int, lineChunk)) {
	if f.texts[i].Len() == 0 {
		return
	}
	f.chunks[i].Text = f.texts[i].String()
	emit(i, f.chunks[i])
	f.chunks[i] = lineChunk{}
	f.texts[i] = strings.Builder{}
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

func (f *writeShardFn) ProcessElement(ctx context.Context, _ int, chunks func(*lineChunk) bool, emitAck func(string)) error {
	final := fmt.Sprintf("%s%s-%s.jsonl", f.Prefix, f.Name, uuid.NewString())
	tmp := final + ".tmp"
	acks, err := f.write(ctx, tmp, chunks)
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

// write writes the chunks' lines to path and closes it, returning their
// ack IDs.
func (f *writeShardFn) write(ctx context.Context, path string, chunks func(*lineChunk) bool) ([]string, error) {
	w, err := f.fs.OpenWrite(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("pipeline: open %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var acks []string
	var c lineChunk
	for chunks(&c) {
		if _, err := bw.WriteString(c.Text); err != nil {
			w.Close()
			return nil, fmt.Errorf("pipeline: write %s: %w", path, err)
		}
		acks = append(acks, c.Acks...)
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
