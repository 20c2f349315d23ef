package adaptive

// What the external tests read of a Throttler's insides.

// StateVersion is the version byte of a Throttler's state encoding.
const StateVersion = stateVersion

// Started reports whether t has seen an event.
func Started(t *Throttler) bool { return t.started }

// WindowStart is the start of t's FixedReset window, in Unix nanoseconds.
func WindowStart(t *Throttler) int64 { return t.start }
