package sim

import "time"

// Metrics summarise a run, leaving out the warm-up.
type Metrics struct {
	// Offered, Sent, Accepted, BackendRejected and ClientRejected are
	// totals of the Series after the warm-up.
	Offered, Sent, Accepted, BackendRejected, ClientRejected int64
	// Utilisation is Accepted divided by the integral of the Limit series:
	// 1 is all a perfect client could get accepted.
	Utilisation float64
	// Waste is BackendRejected / Sent.
	Waste float64
	// ClientRejectedShare is ClientRejected / Offered.
	ClientRejectedShare float64
	// Recovery has one entry per phase change of the scenario, in order.
	Recovery []Recovery
}

// Recovery is the recovery after one change of a scenario.
type Recovery struct {
	// At is the time of the change.
	At time.Duration
	// Measured is false for a change after which nothing can be accepted
	// (an outage begins); Time is then meaningless.
	Measured bool
	// Time is how long after the change utilisation was back at 90 %: the
	// end of the first second from which three consecutive seconds reach
	// 90 % together. It is negative if that never happened before the next
	// change or the end of the run.
	Time time.Duration
}

// RecoveryThreshold is the utilisation a run must be back at after a change
// for it to count as recovered.
const RecoveryThreshold = 0.9

// recoverySpan is the number of seconds averaged by the recovery test.
const recoverySpan = 3

// measure computes the metrics of a run.
func measure(sc *Scenario, s *Series) Metrics {
	var m Metrics
	var limit float64
	for i := int(sc.WarmUp / time.Second); i < len(s.Sent); i++ {
		m.Offered += s.Offered[i]
		m.Sent += s.Sent[i]
		m.Accepted += s.Accepted[i]
		m.BackendRejected += s.BackendRejected[i]
		m.ClientRejected += s.ClientRejected[i]
		limit += s.Limit[i]
	}
	m.Utilisation = ratio(float64(m.Accepted), limit)
	m.Waste = ratio(float64(m.BackendRejected), float64(m.Sent))
	m.ClientRejectedShare = ratio(float64(m.ClientRejected), float64(m.Offered))
	for i := 1; i < len(sc.Phases); i++ {
		m.Recovery = append(m.Recovery, recovery(sc, s, i))
	}
	return m
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
