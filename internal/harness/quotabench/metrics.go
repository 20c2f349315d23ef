package quotabench

import (
	"slices"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// competitorName names the uncontrolled client in testserver.ClientHeader.
const competitorName = "competitor"

// Point is one second of a run as the quota server counted it.
type Point struct {
	// T is the second, in Unix seconds.
	T int64
	// Accepted and Rejected are the pipelines' calls answered 200 and
	// 429; CompetitorAccepted the competitor's answered 200.
	Accepted, Rejected, CompetitorAccepted int64
	// Clients is how many of the pipeline processes called in the second.
	Clients int
}

// Measure is what the quota server saw of one run.
type Measure struct {
	// Accepted and Rejected count the pipelines' calls over the whole run.
	Accepted, Rejected int64
	// CompetitorAccepted and CompetitorRejected count the competitor's.
	CompetitorAccepted, CompetitorRejected int64
	// Waste is Rejected ÷ (Accepted + Rejected), 0 if nothing was sent.
	Waste float64

	// Busy is the window over which utilisation is measured: the whole
	// seconds in which every pipeline process was calling, from the
	// second after the last one's first call to the second before the
	// first one's last call, inclusive. BusySeconds is its length, 0 if
	// there is none.
	BusyFrom, BusyTo int64
	BusySeconds      int
	// BusyAccepted and BusyRejected count the pipelines' calls accepted
	// and rejected in the window.
	BusyAccepted, BusyRejected int64
	// CapacityLeft is what the pipelines could have had in the window:
	// the capacity × BusySeconds less what the competitor got.
	CapacityLeft float64
	// Utilisation is BusyAccepted ÷ CapacityLeft, 0 without a window.
	Utilisation float64

	// Series holds every second from the first counted to the last, empty
	// seconds included.
	Series []Point
}

// measure computes a run's Measure from the quota server's stats, for the
// pipeline processes named clients and a server of capacity calls per
// second.
func measure(st testserver.Stats, clients []string, capacity float64) Measure {
	var m Measure
	for _, c := range clients {
		m.Accepted += st.Clients[c].Accepted
		m.Rejected += st.Clients[c].Rejected
	}
	m.CompetitorAccepted = st.Clients[competitorName].Accepted
	m.CompetitorRejected = st.Clients[competitorName].Rejected
	m.Waste = ratio(float64(m.Rejected), float64(m.Accepted+m.Rejected))
	m.Series = series(st, clients)

	first := map[string]int64{}
	last := map[string]int64{}
	for _, sec := range st.Series {
		for _, c := range clients {
			n := sec.Clients[c]
			if n.Accepted+n.Rejected+n.Errors == 0 {
				continue
			}
			if _, ok := first[c]; !ok {
				first[c] = sec.T
			}
			last[c] = sec.T
		}
	}
	if len(first) < len(clients) || len(clients) == 0 {
		return m
	}
	from, to := int64(0), int64(0)
	for i, c := range clients {
		if i == 0 || first[c] > from {
			from = first[c]
		}
		if i == 0 || last[c] < to {
			to = last[c]
		}
	}
	from, to = from+1, to-1 // whole seconds only
	if to < from {
		return m
	}
	m.BusyFrom, m.BusyTo, m.BusySeconds = from, to, int(to-from+1)
	var competitor int64
	for _, p := range m.Series {
		if p.T >= from && p.T <= to {
			m.BusyAccepted += p.Accepted
			m.BusyRejected += p.Rejected
			competitor += p.CompetitorAccepted
		}
	}
	m.CapacityLeft = capacity*float64(m.BusySeconds) - float64(competitor)
	m.Utilisation = ratio(float64(m.BusyAccepted), m.CapacityLeft)
	return m
}

// series turns the server's per-second stats into Points, one per second
// from the first to the last, empty seconds included.
func series(st testserver.Stats, clients []string) []Point {
	if len(st.Series) == 0 {
		return nil
	}
	secs := slices.Clone(st.Series)
	slices.SortFunc(secs, func(a, b testserver.Second) int { return int(a.T - b.T) })
	t0, t1 := secs[0].T, secs[len(secs)-1].T
	out := make([]Point, t1-t0+1)
	for i := range out {
		out[i].T = t0 + int64(i)
	}
	for _, sec := range secs {
		p := &out[sec.T-t0]
		for _, c := range clients {
			n := sec.Clients[c]
			p.Accepted += n.Accepted
			p.Rejected += n.Rejected
			if n.Accepted+n.Rejected+n.Errors > 0 {
				p.Clients++
			}
		}
		p.CompetitorAccepted += sec.Clients[competitorName].Accepted
	}
	return out
}

// Phase counts the pipelines' calls over a span of seconds.
type Phase struct {
	Seconds            int
	Accepted, Rejected int64
}

// AcceptedRate is the calls accepted per second, 0 for an empty phase.
func (p Phase) AcceptedRate() float64 { return ratio(float64(p.Accepted), float64(p.Seconds)) }

// RejectedRate is the calls rejected per second, 0 for an empty phase.
func (p Phase) RejectedRate() float64 { return ratio(float64(p.Rejected), float64(p.Seconds)) }

// phases splits the busy window of m at a fault lasting from Unix second
// from to Unix second to (exclusive): before, during and after.
func phases(m Measure, from, to int64) (before, during, after Phase) {
	for _, p := range m.Series {
		if p.T < m.BusyFrom || p.T > m.BusyTo {
			continue
		}
		ph := &during
		switch {
		case p.T < from:
			ph = &before
		case p.T >= to:
			ph = &after
		}
		ph.Seconds++
		ph.Accepted += p.Accepted
		ph.Rejected += p.Rejected
	}
	return before, during, after
}

// Span is, in a strict scenario, the time from the pipelines' first call
// the quota server saw to their last accepted one; 0 if none was accepted.
func (r Result) Span() time.Duration {
	if r.First.IsZero() || r.LastAccepted.Before(r.First) {
		return 0
	}
	return r.LastAccepted.Sub(r.First)
}

// IdealTime is how long a strict scenario's elements take at the pace of
// its quota: all the processes' elements ÷ QuotaRate; 0 without a rate.
func (r Result) IdealTime() time.Duration {
	s := ratio(float64(r.Elements*len(r.Procs)), r.QuotaRate)
	return time.Duration(s * float64(time.Second))
}

// TimeRatio is Span ÷ IdealTime: 1 for a run that sent its elements at
// the pace of its quota, more for a slower one; 0 if either is 0.
func (r Result) TimeRatio() float64 {
	if r.Span() == 0 {
		return 0
	}
	return ratio(r.Span().Seconds(), r.IdealTime().Seconds())
}

// RateShare is, in a strict scenario, the pipelines' accepted calls ÷ the
// Span ÷ QuotaRate: the share of the quota's rate they reached over the
// run (for a run whose every element succeeded, 1 ÷ TimeRatio); 0 if
// either is 0.
func (r Result) RateShare() float64 {
	return ratio(float64(r.Measure.Accepted), r.QuotaRate*r.Span().Seconds())
}

// ratio is a ÷ b, 0 when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
