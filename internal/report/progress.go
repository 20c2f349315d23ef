// Package report shows a pipeline run to the person who started it: a
// progress line while the run lasts and a summary table at its end, as
// cmd/beamthrottle prints them. Its Progress is the run's pipeline.Monitor.
package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/pipeline"
)

// outputs are the outputs a Progress counts, in the order of its line.
var outputs = []string{pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled, pipeline.OutErrors, pipeline.OutParked}

// Progress counts the elements a run has written so far, per output
// (success, client_throttled, server_throttled, errors, parked), and what
// its last calls heard, for the progress line of local runs: it is the
// pipeline.Monitor passed to pipeline.Run, which tells it what the workers
// in this process do (see pipeline.Monitor for which runners have them).
//
// Make one with NewProgress and pass it to pipeline.Run, one run at a
// time; the run sets it to zero when it starts (Start). Its methods are
// safe for concurrent use while the run goes on; a nil *Progress counts
// nothing.
type Progress struct {
	out    io.Writer
	every  time.Duration
	counts map[string]*atomic.Int64 // by outputs; the map is never written after NewProgress

	mu  sync.Mutex
	api apiState // what the run's calls heard last (see Called)
}

// apiState is what a run's calls heard from the API lately, and the bounds
// of the run's waits, for the progress line's account of a wait.
type apiState struct {
	start      time.Time     // when the run started
	maxWait    time.Duration // the run's bounds (see pipeline.Monitor's Start); 0: none
	maxStall   time.Duration
	lastOK     time.Time     // the last call accepted
	refused    int           // calls refused since (429, or the API could not be reached)
	lastRefuse time.Time     // the last of them
	retryAfter time.Duration // its Retry-After, 0 if none
	down       bool          // it could not reach the API
}

// NewProgress returns a Progress whose Report writes its line to out every
// `every` (none when out is nil or every is 0).
func NewProgress(out io.Writer, every time.Duration) *Progress {
	p := &Progress{out: out, every: every, counts: make(map[string]*atomic.Int64, len(outputs))}
	for _, name := range outputs {
		p.counts[name] = new(atomic.Int64)
	}
	return p
}

// Start sets p to zero for a run that starts now with the given bounds on
// its waits (pipeline.Monitor).
func (p *Progress) Start(maxWait, maxStall time.Duration) {
	if p == nil {
		return
	}
	for _, c := range p.counts {
		c.Store(0)
	}
	p.mu.Lock()
	p.api = apiState{start: time.Now(), maxWait: maxWait, maxStall: maxStall}
	p.mu.Unlock()
}

// Written counts n elements of the named output (pipeline.Monitor).
func (p *Progress) Written(output string, n int64) {
	if p == nil {
		return
	}
	if c, ok := p.counts[output]; ok {
		c.Add(n)
	}
}

// Called notes the outcome of a call of the run made at t (err nil for an
// accepted one), for the progress line: it says why the run waits while
// the API refuses calls (HTTP 429, with or without Retry-After) or cannot
// be reached. Other errors are answers too: they end such a wait
// (pipeline.Monitor).
func (p *Progress) Called(t time.Time, err error) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a := &p.api
	switch {
	case err == nil:
		a.lastOK, a.refused = t, 0
	case clientcall.Classify(err) == clientcall.Throttled:
		a.refused++
		a.lastRefuse, a.down = t, false
		a.retryAfter, _ = clientcall.RetryAfter(err)
	case clientcall.Classify(err) == clientcall.Unreachable:
		a.refused++
		a.lastRefuse, a.down, a.retryAfter = t, true, 0
	default:
		a.refused = 0
	}
}

// Counts returns the elements done so far per output, as the progress line
// counts them.
func (p *Progress) Counts() map[string]int64 {
	out := make(map[string]int64, len(outputs))
	if p == nil {
		return out
	}
	for name, c := range p.counts {
		out[name] = c.Load()
	}
	return out
}

// Line describes the elements done so far, out of total (unknown when
// total <= 0).
func (p *Progress) Line(total int64) string {
	counts := p.Counts()
	var done int64
	parts := make([]string, 0, len(outputs))
	for _, name := range outputs {
		n := counts[name]
		done += n
		if n != 0 || name != pipeline.OutParked {
			parts = append(parts, fmt.Sprintf("%s=%d", name, n))
		}
	}
	line := fmt.Sprintf("progress: %d done %s", done, strings.Join(parts, " "))
	if total > 0 {
		line = fmt.Sprintf("progress: %d/%d done (%.0f%%) %s", done, total, 100*float64(done)/float64(total), strings.Join(parts, " "))
	}
	if w := p.waiting(); w != "" && (total <= 0 || done < total) {
		line += "; waiting: " + w
	}
	return line
}

// waiting says why the run waits and until when, if its last calls were
// refused; "" otherwise.
func (p *Progress) waiting() string {
	if p == nil {
		return ""
	}
	p.mu.Lock()
	a := p.api
	p.mu.Unlock()
	if a.refused == 0 {
		return ""
	}
	const clock = "15:04:05"
	calls := fmt.Sprintf("the last call (at %s)", a.lastRefuse.Format(clock))
	if a.refused > 1 {
		calls = fmt.Sprintf("the last %d calls (the last at %s)", a.refused, a.lastRefuse.Format(clock))
	}
	why := "the API answered 429 to " + calls
	switch {
	case a.down:
		why = "the API could not be reached on " + calls
	case a.retryAfter > 0:
		why += fmt.Sprintf(", asking for none before %s (Retry-After %v)", a.lastRefuse.Add(a.retryAfter).Format(clock), a.retryAfter)
	default:
		why += ", backing off"
	}
	switch {
	case a.maxStall > 0:
		since := a.start
		if a.lastOK.After(since) {
			since = a.lastOK
		}
		return why + fmt.Sprintf("; what is not sent by %s goes to the throttled outputs (--max_wait auto: %v with no call accepted)",
			since.Add(a.maxStall).Format(clock), a.maxStall)
	case a.maxWait > 0:
		return why + fmt.Sprintf("; an element not sent within %v of its arrival goes to the throttled outputs (--max_wait)", a.maxWait)
	}
	return why + " (--max_wait none: elements wait as long as it takes)"
}

// Report writes p's line, out of total elements (unknown when total <= 0),
// to its writer every interval until the returned stop is called; it writes
// nothing when NewProgress was given no writer or no interval.
func (p *Progress) Report(total int64) (stop func()) {
	if p == nil || p.out == nil || p.every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintln(p.out, p.Line(total))
			}
		}
	}()
	return func() { close(done); <-finished }
}
