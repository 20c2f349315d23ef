package pipeline

import (
	"fmt"
	"time"
)

// Defaults of WriteLines.
const (
	// DefaultShards is how many files WriteLines writes per window and
	// firing: a bounded run writes at most this many files per output.
	DefaultShards = 4
	// DefaultFlushInterval is how often a streaming pipeline (a
	// subscription or a rate-limited generator) finalises its output files,
	// and so acknowledges the messages written to them. It stays well
	// within the ten minutes for which pubsubio.Read keeps a message leased
	// (pubsubio.DefaultMaxExtension).
	DefaultFlushInterval = time.Minute
)

// WriteOption configures WriteLines.
type WriteOption func(*writeConfig)

type writeConfig struct {
	shards int
	flush  time.Duration
}

// WithShards sets how many files WriteLines writes per window and firing
// (default DefaultShards): lines are spread round-robin over this many
// shards and each shard's lines of a firing go to one file. n must be
// positive.
func WithShards(n int) WriteOption {
	return func(c *writeConfig) { c.shards = n }
}

// WithFlushInterval makes WriteLines suitable for unbounded input: it groups
// the lines in the global window with a trigger that fires every d of
// processing time (Repeat(AfterProcessingTime + d), discarding fired
// panes), so each shard writes a file about every d while lines arrive, and
// a last one when the input ends. Zero (the default) keeps the default
// trigger: one file per shard when the input ends, which for unbounded
// input is never, so its messages would never be acknowledged. d must not
// be negative.
func WithFlushInterval(d time.Duration) WriteOption {
	return func(c *writeConfig) { c.flush = d }
}

// check reports a configuration WriteLines cannot use.
func (c writeConfig) check() error {
	switch {
	case c.shards < 1:
		return fmt.Errorf("shards must be positive, got %d", c.shards)
	case c.flush < 0:
		return fmt.Errorf("flush interval must not be negative, got %v", c.flush)
	}
	return nil
}
