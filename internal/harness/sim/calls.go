package sim

import (
	"math"
	"slices"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
)

// flight is a call in flight: the core's call, answered at answer. A call
// that outlives its firing (Detach) keeps its elements, as the transform
// keeps them in state, for the next firing to carry.
type flight struct {
	call    int
	at      time.Duration // when it was sent
	answer  time.Duration
	results []firing.Result

	// Set when its firing ends with it unanswered.
	elems []queued
	sent  time.Time
	prob  float64
}

// send sends the call of step s at t to the backend, which decides its
// answer at once; the answer comes the backend's wait (a Queuer's) plus
// Latency later, or, past Config.CallTimeout, as a failure at the timeout.
// With Config.Advertise it carries the quota the backend advertises after
// serving the call's elements.
func (g *group) send(t time.Duration, s firing.Step) {
	r := g.r
	sec := r.second(t)
	results := make([]firing.Result, len(s.Elems))
	var wait time.Duration
	for i := range s.Elems {
		var ok bool
		var ra, w time.Duration
		if q, queues := r.backend.(Queuer); queues {
			ok, ra, w = q.Admit(t)
		} else {
			ok, ra = r.backend.Take(t)
		}
		wait = max(wait, w)
		results[i] = firing.Result{RetryAfter: ra}
		if !ok {
			results[i].Class = clientcall.Throttled
		}
	}
	lat := wait + g.callLatency()
	admitted := slices.ContainsFunc(results, func(x firing.Result) bool { return x.Class != clientcall.Throttled })
	if r.cfg.RefuseAtOnce && len(results) > 0 && !admitted {
		lat = refusalLatency // a gateway's refusal, before the backend works
	}
	if t >= r.warm {
		r.answers = append(r.answers, lat)
	}
	timedOut := r.cfg.CallTimeout > 0 && lat > r.cfg.CallTimeout
	if timedOut {
		lat = r.cfg.CallTimeout
	}
	for i, k := range s.Elems {
		r.series.Sent[sec]++
		switch {
		case timedOut:
			r.series.TimedOut[sec]++
			results[i] = firing.Result{Class: clientcall.Failed}
		case results[i].Class == clientcall.Throttled:
			r.series.BackendRejected[sec]++
		default:
			r.series.Accepted[sec]++
			r.lastOK = max(r.lastOK, t)
			if t >= r.warm && r.overloaded[sec] {
				g.accepted++
			}
			if t >= r.warm {
				r.delays = append(r.delays, t-g.taken[k].arrived)
			}
		}
	}
	if !timedOut && len(results) > 0 {
		results[0].Quota = g.advertised(t, t+lat)
	}
	if g.board != nil {
		g.board.start(r.start.Add(t))
	}
	f := flight{call: s.Call, at: t, answer: t + lat, results: results}
	i := len(g.flight) // kept in order of answer: a slow call is passed by later ones
	for i > 0 && g.flight[i-1].answer > f.answer {
		i--
	}
	g.flight = slices.Insert(g.flight, i, f)
}

// refusalLatency is how long a refusal takes with Config.RefuseAtOnce: a
// round trip over loopback.
const refusalLatency = time.Millisecond

// callLatency is the latency of a call: Config.Latency, or a lognormal
// draw around it with Config.LatencyP99.
func (g *group) callLatency() time.Duration {
	lat := g.r.cfg.Latency
	if g.latency == nil || g.sigma == 0 {
		return lat
	}
	d := float64(lat) * math.Exp(g.sigma*g.latency.NormFloat64())
	return time.Duration(min(d, float64(time.Hour)))
}

// post tells the worker's board, if any, of the answers that came by t, as
// the transform's calls post theirs when they come, between firings too.
func (g *group) post(t time.Duration) {
	if g.board == nil {
		return
	}
	for ; g.posted < len(g.flight) && g.flight[g.posted].answer <= t; g.posted++ {
		f := &g.flight[g.posted]
		g.board.finish(g.r.start.Add(f.at), g.r.start.Add(f.answer))
	}
}
