package livebench

import (
	"math"
	"time"

	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// competitorName is the competitor's name in testserver.ClientHeader.
const competitorName = "competitor"

// Result is one scenario run in one mode, as results.json stores it.
type Result struct {
	Scenario string    `json:"scenario"`
	Mode     string    `json:"mode"`
	Measured time.Time `json:"measured"`
	// Duration is how long a streaming run's source emitted.
	Duration string `json:"duration,omitempty"`
	// Competitor is the competitor's rate as a multiple of the quota.
	Competitor float64 `json:"competitor,omitempty"`

	// The pipeline's calls as the server answered them: over the measured
	// seconds of a streaming run, over the whole of a bounded one.
	Accepted int64 `json:"accepted"`
	Rejected int64 `json:"rejected"`
	Errors   int64 `json:"errors"`
	// ClientThrottled counts the elements the pipeline did not send:
	// reported each second by a streaming run, from the run's metrics
	// for a bounded one.
	ClientThrottled int64 `json:"client_throttled"`
	// Waste is Rejected ÷ (Accepted + Rejected).
	Waste float64 `json:"waste"`

	// Streaming runs.
	Seconds            int     `json:"seconds,omitempty"`
	CompetitorAccepted int64   `json:"competitor_accepted,omitempty"`
	CompetitorRejected int64   `json:"competitor_rejected,omitempty"`
	Capacity           float64 `json:"capacity,omitempty"` // left to the pipeline
	Utilisation        float64 `json:"utilisation,omitempty"`
	// Recovery is the seconds from a change until the pipeline was back
	// at 90 %, -1 if it never was; nil without a change.
	Recovery *int `json:"recovery_s,omitempty"`

	// Bounded runs: the elements' outcomes, the run's wall time and the
	// ideal time (elements ÷ the quota's average rate), in seconds.
	Elements        int64   `json:"elements,omitempty"`
	Success         int64   `json:"success,omitempty"`
	ServerThrottled int64   `json:"server_throttled,omitempty"`
	ErrorElements   int64   `json:"error_elements,omitempty"`
	Elapsed         float64 `json:"elapsed_s,omitempty"`
	Ideal           float64 `json:"ideal_s,omitempty"`
	// DelayP99 is the 99th percentile of the time the server took to
	// answer the run's calls (its queue's wait and its latency), and
	// Unloaded its latency without a queue, in seconds; 0 if not
	// measured.
	DelayP99 float64 `json:"delay_p99_s,omitempty"`
	Unloaded float64 `json:"unloaded_s,omitempty"`

	// Crossed runs: the quota's rate (requests/s), the accepted requests
	// per second from the 10th second (see runRates) and the seconds it
	// is over, those over the run and the run's span from the first
	// request to the last accepted one (s), by the server's clock; Stopped
	// if the run was interrupted at its deadline (scenario.deadline).
	QuotaRate     float64 `json:"quota_rate,omitempty"`
	SteadyRate    float64 `json:"steady_rate,omitempty"`
	SteadySeconds int     `json:"steady_s,omitempty"`
	RunRate       float64 `json:"run_rate,omitempty"`
	Span          float64 `json:"span_s,omitempty"`
	Stopped       bool    `json:"stopped,omitempty"`

	// Priority runs: each tier's elements and waits, high first.
	Tiers []TierResult `json:"tiers,omitempty"`
}

// value is the result's measure of m: NaN if it was not measured, +Inf
// for a recovery that never came.
func (r Result) value(m metric) float64 {
	switch m {
	case utilisation:
		if r.Capacity <= 0 {
			return math.NaN()
		}
		return r.Utilisation
	case waste:
		if r.Accepted+r.Rejected == 0 {
			return math.NaN()
		}
		return r.Waste
	case recovery:
		switch {
		case r.Recovery == nil:
			return math.NaN()
		case *r.Recovery < 0:
			return math.Inf(1)
		}
		return float64(*r.Recovery)
	case succeeded:
		if r.Elements == 0 {
			return math.NaN()
		}
		return float64(r.Success) / float64(r.Elements)
	case timeRatio:
		if r.Ideal <= 0 {
			return math.NaN()
		}
		return r.Elapsed / r.Ideal
	case highSucceeded:
		h, ok := tier(r.Tiers, tierHigh)
		if !ok || h.Sent == 0 {
			return math.NaN()
		}
		return float64(h.Succeeded) / float64(h.Sent)
	case highP99Ratio:
		h, okH := tier(r.Tiers, tierHigh)
		l, okL := tier(r.Tiers, tierLow)
		if !okH || !okL || h.Waits == 0 || l.Waits == 0 || !(l.MedianWait > 0) {
			return math.NaN()
		}
		return h.P99Wait / l.MedianWait
	case delayP99Ratio:
		if r.DelayP99 <= 0 || r.Unloaded <= 0 {
			return math.NaN()
		}
		return r.DelayP99 / r.Unloaded
	case clientThrottled:
		if r.Elements == 0 {
			return math.NaN()
		}
		return float64(r.ClientThrottled)
	case steadyShare:
		if r.SteadySeconds == 0 || r.QuotaRate <= 0 {
			return math.NaN()
		}
		return r.SteadyRate / r.QuotaRate
	case runShare:
		if r.Span <= 0 || r.QuotaRate <= 0 {
			return math.NaN()
		}
		return r.RunRate / r.QuotaRate
	case runRate:
		if r.Span <= 0 {
			return math.NaN()
		}
		return r.RunRate
	}
	return math.NaN()
}

// meets reports whether r, a run of sc, meets target t. A bounded run's
// time and rates count only if its successes met sc's success target
// (every element if it has none), and not if it was stopped at its
// deadline: a run that rejects its input can end early.
func (sc scenario) meets(r Result, t target) bool {
	switch t.metric {
	case timeRatio, steadyShare, runShare, runRate:
		if r.Stopped {
			return false
		}
		enough := target{metric: succeeded, limit: 1}
		for _, st := range sc.targets {
			if st.metric == succeeded {
				enough = st
			}
		}
		if r.Success < r.Elements && !enough.met(r.value(succeeded)) {
			return false
		}
	}
	return t.met(r.value(t.metric))
}

// wasteOf is rejected ÷ (accepted + rejected), 0 if nothing was sent.
func wasteOf(accepted, rejected int64) float64 {
	if accepted+rejected == 0 {
		return 0
	}
	return float64(rejected) / float64(accepted+rejected)
}

// rateStep is a quota rate, in requests per second, from at on.
type rateStep struct {
	at   time.Time
	rate float64
}

// capacity is the quota over the second starting at Unix second sec, for
// the rate steps (sorted by at; before the first, the rate is 0): the
// integral of the rate over that second.
func capacity(steps []rateStep, sec int64) float64 {
	from, to := time.Unix(sec, 0), time.Unix(sec+1, 0)
	var c float64
	for i, s := range steps {
		end := to
		if i+1 < len(steps) && steps[i+1].at.Before(end) {
			end = steps[i+1].at
		}
		start := s.at
		if start.Before(from) {
			start = from
		}
		if end.After(start) {
			c += s.rate * end.Sub(start).Seconds()
		}
	}
	return c
}

// streamRun is what a streaming run measures from: the server's series,
// the quota's rate over time, and the measured seconds [from, to).
type streamRun struct {
	series   []testserver.Second
	steps    []rateStep
	offered  float64 // elements/s of the source: the most the pipeline could send
	from, to int64
	// changeAt is the time of a quota change or the end of an outage (zero
	// if none) and recoverTo the pipeline's accepted calls per second that
	// count as recovered (90 % of it).
	changeAt  time.Time
	recoverTo float64
}

// pipelineSecond is one second of the series split between the pipeline
// and the competitor.
type pipelineSecond struct {
	accepted, rejected, errors, clientThrottled int64
	compAccepted, compRejected                  int64
}

// split returns the counts of second s, the competitor's taken out.
func split(s testserver.Second) pipelineSecond {
	c := s.Clients[competitorName]
	return pipelineSecond{
		accepted: s.Accepted - c.Accepted, rejected: s.Rejected - c.Rejected, errors: s.Errors - c.Errors,
		clientThrottled: s.ClientThrottled, compAccepted: c.Accepted, compRejected: c.Rejected,
	}
}

// firstPipelineSecond is the first second of series in which the pipeline
// (not the competitor) sent a call, and whether there is one.
func firstPipelineSecond(series []testserver.Second) (int64, bool) {
	for _, s := range series {
		if p := split(s); p.accepted+p.rejected+p.errors > 0 {
			return s.T, true
		}
	}
	return 0, false
}

// measure computes a streaming run's metrics over its measured seconds.
// Utilisation is the pipeline's accepted calls divided by the capacity
// left to it: each second, the quota (at most what the source offered)
// minus the competitor's accepted calls, at least 0.
func (sr streamRun) measure() Result {
	var r Result
	n := int(max(sr.to-sr.from, 0))
	dense := make([]pipelineSecond, n)
	for _, s := range sr.series {
		if s.T >= sr.from && s.T < sr.to {
			dense[s.T-sr.from] = split(s)
		}
	}
	for i, p := range dense {
		r.Accepted += p.accepted
		r.Rejected += p.rejected
		r.Errors += p.errors
		r.ClientThrottled += p.clientThrottled
		r.CompetitorAccepted += p.compAccepted
		r.CompetitorRejected += p.compRejected
		c := min(capacity(sr.steps, sr.from+int64(i)), sr.offered)
		r.Capacity += max(c-float64(p.compAccepted), 0)
	}
	r.Seconds = n
	if r.Capacity > 0 {
		r.Utilisation = float64(r.Accepted) / r.Capacity
	}
	r.Waste = wasteOf(r.Accepted, r.Rejected)
	if !sr.changeAt.IsZero() {
		rec := recoveredAfter(dense, sr.from, sr.changeAt.Unix(), 0.9*sr.recoverTo)
		r.Recovery = &rec
	}
	return r
}

// recoveredAfter is the number of seconds from the change (Unix second
// change) to the first second from which three in a row have at least
// level accepted calls, or -1 if there is none among the measured seconds
// (dense, starting at Unix second from).
func recoveredAfter(dense []pipelineSecond, from, change int64, level float64) int {
	for i := max(change-from, 0); i+3 <= int64(len(dense)); i++ {
		ok := true
		for _, p := range dense[i : i+3] {
			if float64(p.accepted) < level {
				ok = false
				break
			}
		}
		if ok {
			return int(from + i - change)
		}
	}
	return -1
}

// measureBounded computes a bounded run's metrics from its summary, the
// server's stats and the run's wall time.
func measureBounded(sc scenario, sum pipeline.Summary, st testserver.Stats, elapsed time.Duration) Result {
	r := Result{
		Accepted: st.Accepted, Rejected: st.Rejected, Errors: st.Errors,
		Waste:           wasteOf(st.Accepted, st.Rejected),
		Elements:        int64(sc.elements),
		Success:         sum.Success,
		ClientThrottled: sum.ClientThrottled,
		ServerThrottled: sum.ServerThrottled,
		ErrorElements:   sum.Errors + sum.Dropped + sum.Parked,
		Elapsed:         elapsed.Seconds(),
		Ideal:           sc.ideal().Seconds(),
		DelayP99:        st.DelayP99Ms / 1000,
		Unloaded:        sc.server.Latency.Seconds(),
	}
	return r
}
