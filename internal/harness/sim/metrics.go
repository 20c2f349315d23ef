package sim

import (
	"math"
	"slices"
	"time"
)

// Metrics summarise a run, leaving out the warm-up.
type Metrics struct {
	// Offered, Sent, Accepted, BackendRejected, ClientRejected,
	// ServerThrottled, Postponed, TimedOut, CompetitorSent and
	// CompetitorAccepted are totals of the Series after the warm-up.
	Offered, Sent, Accepted, BackendRejected, ClientRejected, ServerThrottled, Postponed int64
	TimedOut, CompetitorSent, CompetitorAccepted                                         int64
	// Limit is what a perfect client could have had accepted: the sum over
	// the phases (after the warm-up) of
	//
	//	min(offered, capacity − competitor accepted, ceiling)
	//
	// each integrated over the phase: offered is the phase's nominal
	// offered rate times its length, capacity its nominal capacity times
	// its length (zero in an outage), competitor accepted what the backend
	// accepted from the competitor in the phase (so capacity − competitor
	// accepted is the capacity left to the pipeline), and ceiling the most
	// the groups can send, Groups × CallsInFlight / Latency (with
	// Config.SizeCalls, the workers' calls under way at most instead of
	// Groups × CallsInFlight), times the phase's length.
	Limit float64
	// Utilisation is Accepted / Limit: 1 is all a perfect client could get
	// accepted (random arrivals and a backend's burst can make it a little
	// more).
	Utilisation float64
	// Waste is BackendRejected / Sent.
	Waste float64
	// Final are the outcomes of the elements that arrived after the
	// warm-up, Queued counting those not final at the end of the run.
	Final Outcomes
	// ClientRejectedShare is the share of the elements that arrived after
	// the warm-up and were final by the end that the client rejected:
	// Final.ClientRejected / (Final.Arrived − Final.Queued). (Under
	// overload with postponement the last MaxWait of arrivals is still
	// queued at the end, so a share of Offered would understate it.)
	ClientRejectedShare float64
	// Fairness is Jain's index (Σx)² / (n·Σx²) of the groups' accepted
	// calls in the seconds after the warm-up in which the phase is
	// overloaded (offered plus competitor above a positive capacity): 1
	// when the groups share evenly, 1/n when one takes everything. It is 1
	// for one group and NaN when no overloaded second had an accepted call.
	Fairness float64
	// DelayP50 and DelayP99 are percentiles of the queueing delay of the
	// calls accepted after the warm-up: from the element's arrival to the
	// sending of its accepted call (nearest rank). Zero when none was
	// accepted.
	DelayP50, DelayP99 time.Duration
	// AnswerP50 and AnswerP99 are percentiles of the backend's time to
	// answer the calls sent after the warm-up: a Queuer's wait plus the
	// latency, whether or not the call timed out (nearest rank). Zero when
	// none was sent.
	AnswerP50, AnswerP99 time.Duration
	// Recovery has one entry per phase change of the scenario, in order.
	Recovery []Recovery
	// Drained is when the last element became final, from the start of
	// the run, if every element was final by its end; −1 otherwise.
	Drained time.Duration
	// IdealDrain is the least time to serve every element of the run:
	// elements ÷ min(the first phase's capacity, ceiling).
	IdealDrain time.Duration
	// LastAccepted is when the last call the backend accepted was sent,
	// from the start of the run; 0 when none was.
	LastAccepted time.Duration
	// RunUse is the share of the first phase's capacity used over the
	// run: the calls accepted ÷ (capacity × LastAccepted). The last
	// answers' latency, which no client can shorten, is left out. Zero
	// when none was accepted.
	RunUse float64
	// SteadyUse is the share of the first phase's capacity used from
	// SteadyFrom on: the calls accepted in the whole seconds from
	// SteadyFrom to the one of LastAccepted ÷ (capacity × those seconds),
	// a start-up left out. Zero when LastAccepted is within a second of
	// SteadyFrom.
	SteadyUse float64
}

// SteadyFrom is when Metrics.SteadyUse starts counting: a slow start's
// climb and the first answers of a slow API are behind.
const SteadyFrom = 10 * time.Second

// Recovery is the recovery after one change of a scenario.
type Recovery struct {
	// At is the time of the change.
	At time.Duration
	// Measured is false for a change after which nothing can be accepted
	// (an outage begins); Time is then meaningless.
	Measured bool
	// Time is how long after the change utilisation was back at 90 %: the
	// end of the first second from which three consecutive seconds reach
	// 90 % of Series.Limit together. It is negative if that never happened
	// before the next change or the end of the run.
	Time time.Duration
}

// RecoveryThreshold is the utilisation a run must be back at after a change
// for it to count as recovered.
const RecoveryThreshold = 0.9

// recoverySpan is the number of seconds averaged by the recovery test.
const recoverySpan = 3

// measure computes the metrics of a run; accepted are the groups' accepted
// calls in overloaded seconds.
func measure(r *run, accepted []int64) Metrics {
	sc, s := r.sc, &r.series
	var m Metrics
	first := int(sc.WarmUp / time.Second)
	for i := first; i < len(s.Sent); i++ {
		m.Offered += s.Offered[i]
		m.Sent += s.Sent[i]
		m.Accepted += s.Accepted[i]
		m.BackendRejected += s.BackendRejected[i]
		m.ClientRejected += s.ClientRejected[i]
		m.ServerThrottled += s.ServerThrottled[i]
		m.Postponed += s.Postponed[i]
		m.TimedOut += s.TimedOut[i]
		m.CompetitorSent += s.CompetitorSent[i]
		m.CompetitorAccepted += s.CompetitorAccepted[i]
	}
	ceiling := r.cfg.ceiling()
	for i, p := range sc.Phases {
		from := max(p.At, sc.WarmUp)
		to := min(sc.phaseEnd(i), sc.Duration)
		if to <= from {
			continue
		}
		var comp, arrived int64
		for sec := int(from / time.Second); sec < int(to/time.Second); sec++ {
			comp += s.CompetitorAccepted[sec]
			arrived += s.Offered[sec]
		}
		d := (to - from).Seconds()
		left := max(0, p.capacity()*r.cfg.Capacity*d-float64(comp))
		offered := p.Offered * r.cfg.Capacity * d
		if sc.Arrivals != nil {
			offered = float64(arrived)
		}
		m.Limit += min(offered, left, ceiling*d)
	}
	m.Utilisation = ratio(float64(m.Accepted), m.Limit)
	m.Waste = ratio(float64(m.BackendRejected), float64(m.Sent))
	m.Final = r.cohort
	m.ClientRejectedShare = ratio(float64(m.Final.ClientRejected), float64(m.Final.Arrived-m.Final.Queued))
	m.Fairness = jain(accepted)
	if len(r.delays) > 0 {
		slices.Sort(r.delays)
		m.DelayP50, m.DelayP99 = percentile(r.delays, 0.5), percentile(r.delays, 0.99)
	}
	if len(r.answers) > 0 {
		slices.Sort(r.answers)
		m.AnswerP50, m.AnswerP99 = percentile(r.answers, 0.5), percentile(r.answers, 0.99)
	}
	for i := 1; i < len(sc.Phases); i++ {
		m.Recovery = append(m.Recovery, recovery(sc, s, i))
	}
	m.Drained = -1
	if r.out.Queued == 0 {
		m.Drained = r.lastFinal
	}
	if rate := min(sc.Phases[0].capacity()*r.cfg.Capacity, ceiling); rate > 0 {
		m.IdealDrain = time.Duration(float64(r.out.Arrived) / rate * 1e9)
	}
	m.LastAccepted = r.lastOK
	if capacity := sc.Phases[0].capacity() * r.cfg.Capacity; r.lastOK > 0 && capacity > 0 {
		var all int64
		for _, n := range s.Accepted {
			all += n
		}
		m.RunUse = float64(all) / (capacity * r.lastOK.Seconds())
	}
	m.SteadyUse = steadyUse(s.Accepted, sc.Phases[0].capacity()*r.cfg.Capacity, r.lastOK)
	return m
}

// steadyUse returns Metrics.SteadyUse of accepted, the accepted calls per
// second, at capacity (requests per second), the last accepted call sent
// at last.
func steadyUse(accepted []int64, capacity float64, last time.Duration) float64 {
	from, end := int(SteadyFrom/time.Second), min(int(last/time.Second), len(accepted)) // the second of the last, left out
	if end <= from || !(capacity > 0) {
		return 0
	}
	var n int64
	for _, a := range accepted[from:end] {
		n += a
	}
	return float64(n) / (capacity * float64(end-from))
}

// jain returns Jain's fairness index of xs: 1 for one value, NaN if all are
// zero.
func jain(xs []int64) float64 {
	if len(xs) == 1 {
		return 1
	}
	var sum, sq float64
	for _, x := range xs {
		sum += float64(x)
		sq += float64(x) * float64(x)
	}
	if sq == 0 {
		return math.NaN()
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// percentile returns the p-quantile of sorted by nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// recovery measures the recovery after the change to phase i.
func recovery(sc *Scenario, s *Series, i int) Recovery {
	r := Recovery{At: sc.Phases[i].At, Time: -1}
	if sc.Phases[i].limit() == 0 {
		return r
	}
	r.Measured = true
	first := int(sc.Phases[i].At / time.Second)
	last := len(s.Sent) // exclusive end of the phase, in seconds
	if i+1 < len(sc.Phases) {
		last = int(sc.Phases[i+1].At / time.Second)
	}
	for sec := first; sec+recoverySpan <= last; sec++ {
		var acc, lim float64
		for j := sec; j < sec+recoverySpan; j++ {
			acc += float64(s.Accepted[j])
			lim += s.Limit[j]
		}
		if acc >= RecoveryThreshold*lim {
			r.Time = time.Duration(sec-first+1) * time.Second
			return r
		}
	}
	return r
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
