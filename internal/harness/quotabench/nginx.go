package quotabench

import (
	"net/http"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// nginxStats counts nginx's log of a run as the quota server counts its
// requests: in all, per second and per client, 200 accepted and 429
// rejected (anything else an error), and each client's span.
func nginxStats(reqs []services.NginxRequest) (testserver.Stats, map[string]testserver.Span) {
	st := testserver.Stats{Clients: map[string]testserver.Counts{}}
	spans := map[string]testserver.Span{}
	secs := map[int64]int{} // second → index in st.Series
	for _, q := range reqs {
		var add testserver.Counts
		switch q.Status {
		case http.StatusOK:
			add.Accepted, add.AcceptedCost = 1, 1
		case http.StatusTooManyRequests:
			add.Rejected, add.RejectedCost = 1, 1
		default:
			add.Errors, add.ErrorCost = 1, 1
		}
		st.Accepted += add.Accepted
		st.Rejected += add.Rejected
		st.Errors += add.Errors
		t := q.At.Unix()
		i, ok := secs[t]
		if !ok {
			i = len(st.Series)
			secs[t] = i
			st.Series = append(st.Series, testserver.Second{T: t})
		}
		sec := &st.Series[i]
		sec.Accepted += add.Accepted
		sec.Rejected += add.Rejected
		sec.Errors += add.Errors
		if q.Client == "" {
			continue
		}
		if sec.Clients == nil {
			sec.Clients = map[string]testserver.Counts{}
		}
		sec.Clients[q.Client] = plus(sec.Clients[q.Client], add)
		st.Clients[q.Client] = plus(st.Clients[q.Client], add)
		sp := spans[q.Client]
		if sp.First.IsZero() || q.At.Before(sp.First) {
			sp.First = q.At
		}
		if add.Accepted > 0 && q.At.After(sp.LastAccepted) {
			sp.LastAccepted = q.At
		}
		spans[q.Client] = sp
	}
	return st, spans
}

// plus adds counts.
func plus(a, b testserver.Counts) testserver.Counts {
	return testserver.Counts{
		Accepted: a.Accepted + b.Accepted, Rejected: a.Rejected + b.Rejected, Errors: a.Errors + b.Errors,
		AcceptedCost: a.AcceptedCost + b.AcceptedCost, RejectedCost: a.RejectedCost + b.RejectedCost,
		ErrorCost: a.ErrorCost + b.ErrorCost,
	}
}

// FinishSpread is, in a strict scenario, how far apart its processes
// finished: the time between the first and the last process's last
// accepted call, ÷ the time from the run's first call to the last accepted
// one. 0 for one process; processes with equal demand that progress
// together finish close together, and a quota that serves one at a time
// spreads them over the whole run (about 0.67 for three).
func (r Result) FinishSpread() float64 {
	var first, last time.Time
	for _, p := range r.Procs {
		if p.LastAccepted.IsZero() {
			continue
		}
		if first.IsZero() || p.LastAccepted.Before(first) {
			first = p.LastAccepted
		}
		if p.LastAccepted.After(last) {
			last = p.LastAccepted
		}
	}
	return ratio(last.Sub(first).Seconds(), r.Span().Seconds())
}

// finished counts the processes of r whose last accepted call is known.
func (r Result) finished() int {
	n := 0
	for _, p := range r.Procs {
		if !p.LastAccepted.IsZero() {
			n++
		}
	}
	return n
}

// SpreadVerdict checks r's finish spread against its MaxSpread.
func (r Result) SpreadVerdict() Verdict {
	s := r.FinishSpread()
	return Verdict{OK: r.Span() > 0 && s <= r.Scenario.MaxSpread, Text: pct(s) + " (≤ " + pct(r.Scenario.MaxSpread) + ")"}
}
