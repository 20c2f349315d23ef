package pipeline

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	register.DoFn1x2[Result, Line, error](&resultLineFn{})
	register.DoFn1x2[throttle.Record, Line, error](&failureLineFn{})
}

// progressOutputs are the outputs a Progress counts, in the order of its
// line.
var progressOutputs = []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors, OutParked}

// Progress counts the elements a run has written so far, per output
// (success, client_throttled, server_throttled, errors, parked), for the
// progress line of local runs. Each element is counted once, in one place: a
// success or a failure record (whichever step made it: the throttle, the
// payload check, the malformed dead-letter check) where it is formatted as a
// Line, a parked message in parkFn.
//
// Prism runs the workers in this process, but its DoFns are serialised: they
// carry the Progress's ID and find it in a registry while Run lasts, so
// concurrent runs in one process count apart. On a distributed runner the
// workers are other processes and count nothing here; the Beam counters in
// the job UI play this part.
//
// Make one with NewProgress and pass it to Run, one run at a time; Run sets
// it to zero when it starts. Its methods are safe for concurrent use while
// the run goes on; a nil *Progress counts nothing.
type Progress struct {
	id     string
	out    io.Writer
	every  time.Duration
	counts map[string]*atomic.Int64 // by progressOutputs; the map is never written after NewProgress

	mu  sync.Mutex
	api apiState // what the run's calls heard last (see observe)
}

// apiState is what a run's calls heard from the API lately, and the bounds
// of the run's waits, for the progress line's account of a wait.
type apiState struct {
	start      time.Time     // when the run started
	maxWait    time.Duration // the run's bounds (Options.maxWait, maxStall); 0: none
	maxStall   time.Duration
	lastOK     time.Time     // the last call accepted
	refused    int           // calls refused since (429, or the API could not be reached)
	lastRefuse time.Time     // the last of them
	retryAfter time.Duration // its Retry-After, 0 if none
	down       bool          // it could not reach the API
}

// NewProgress returns a Progress that writes its line to out every `every`
// while a run lasts (none when out is nil or every is 0).
func NewProgress(out io.Writer, every time.Duration) *Progress {
	p := &Progress{id: uuid.NewString(), out: out, every: every, counts: make(map[string]*atomic.Int64, len(progressOutputs))}
	for _, name := range progressOutputs {
		p.counts[name] = new(atomic.Int64)
	}
	return p
}

// Counts returns the elements done so far per output, as the progress line
// counts them.
func (p *Progress) Counts() map[string]int64 {
	out := make(map[string]int64, len(progressOutputs))
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
	parts := make([]string, 0, len(progressOutputs))
	for _, name := range progressOutputs {
		n := counts[name]
		done += n
		if n != 0 || name != OutParked {
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

// observe notes the outcome of a call of the run made at now (err nil for
// an accepted one), for the progress line: it says why the run waits while
// the API refuses calls (HTTP 429, with or without Retry-After) or cannot
// be reached. Other errors are answers too: they end such a wait.
func (p *Progress) observe(now time.Time, err error) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	a := &p.api
	switch {
	case err == nil:
		a.lastOK, a.refused = now, 0
	case clientcall.Classify(err) == clientcall.Throttled:
		a.refused++
		a.lastRefuse, a.down = now, false
		a.retryAfter, _ = clientcall.RetryAfter(err)
	case clientcall.Unreachable(err):
		a.refused++
		a.lastRefuse, a.down, a.retryAfter = now, true, 0
	default:
		a.refused = 0
	}
}

// waiting says why the run waits and until when, if its last calls were
// refused; "" otherwise.
func (p *Progress) waiting() string {
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

// add counts n elements of the named output.
func (p *Progress) add(name string, n int64) {
	if p == nil {
		return
	}
	if c, ok := p.counts[name]; ok {
		c.Add(n)
	}
}

// progressRuns holds the Progress of each run going on in this process, by
// ID, for the DoFns of the run (see lookupProgress).
var progressRuns sync.Map

// attach sets p to zero and makes it the Progress of the pipelines built
// with o, until detach is called. A nil p leaves o alone.
func (p *Progress) attach(o *Options) (detach func()) {
	if p == nil {
		return func() {}
	}
	for _, c := range p.counts {
		c.Store(0)
	}
	p.mu.Lock()
	p.api = apiState{start: time.Now(), maxWait: o.maxWait(), maxStall: o.maxStall()}
	p.mu.Unlock()
	progressRuns.Store(p.id, p)
	o.progress = p.id
	return func() { progressRuns.Delete(p.id) }
}

// report writes p's line every p.every until the returned stop is called.
func (p *Progress) report(total int64) (stop func()) {
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

// lookupProgress returns the Progress registered as id, or nil (a run
// without one, or a worker in another process).
func lookupProgress(id string) *Progress {
	if id == "" {
		return nil
	}
	p, _ := progressRuns.Load(id)
	pr, _ := p.(*Progress)
	return pr
}

// resultLineFn formats Success elements as Lines and counts them in the
// run's Progress (ID Progress).
type resultLineFn struct {
	Progress string

	p *Progress
}

func (f *resultLineFn) Setup() { f.p = lookupProgress(f.Progress) }

func (f *resultLineFn) ProcessElement(r Result) (Line, error) {
	l, err := resultLine(r)
	if err == nil {
		f.p.add(OutSuccess, 1)
	}
	return l, err
}

// failureLineFn formats failure Records as Lines and counts them in the
// run's Progress (ID Progress), under their outcome's output.
type failureLineFn struct {
	Progress string

	p *Progress
}

func (f *failureLineFn) Setup() { f.p = lookupProgress(f.Progress) }

func (f *failureLineFn) ProcessElement(r throttle.Record) (Line, error) {
	l, err := failureLine(r)
	if err == nil {
		f.p.add(outputOf(r.Outcome), 1)
	}
	return l, err
}
