package livebench

import (
	"context"
	"net/http"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// The crossed family: latency × limiter × advertised headers, as users
// meet them.
const (
	crossedFamily = "crossed"
	// crossedClient names the pipeline's calls (testserver.ClientHeader),
	// so that the server times its first request and last accepted one.
	crossedClient = "pipeline"
	// steadyAfter is how many seconds from the first request's are left
	// out of the rate from the 10th second: the pacer's learning.
	steadyAfter = 10
	// crossedBound is the crossed runs' bound: a run still going at 1.4 ×
	// its ideal time (plus boundSlack and a latency) gets at most 1/1.4 =
	// 71 % of the quota over the run, below the 90 % target already.
	crossedBound = 1.4
	// boundSlack is added to a bounded run's deadline for Prism's start
	// and the writing of the outputs.
	boundSlack = 15 * time.Second
)

// crossed is a scenario of the crossed family: a fixed window of
// cfg.Quota per 1 s whose refusals are answered at once, elements
// generated, the paced mode only, bounded by crossedBound.
func crossed(name, about string, cfg testserver.Config, elements int, targets []target) scenario {
	cfg.Mode, cfg.Period, cfg.RefuseAtOnce = testserver.FixedWindow, time.Second, true
	return scenario{name: name, family: crossedFamily, about: about, server: cfg, elements: elements,
		modes: []string{"paced"}, bound: crossedBound, targets: targets}
}

// isCrossed reports whether the scenario is of the crossed family.
func (sc scenario) isCrossed() bool { return sc.family == crossedFamily }

// heldTo is the rate in requests per second a bounded run is held to: the
// quota's (see quotaRate), or the rate its server advertises if lower
// (testserver.Config.AdvertiseQuota).
func (sc scenario) heldTo() float64 {
	q := sc.quotaRate()
	if a := sc.server.AdvertiseQuota; a > 0 && sc.server.Advertise != testserver.AdvertiseNone {
		q = min(q, float64(a)/sc.meanPeriod().Seconds())
	}
	return q
}

// deadline is how long a bounded run may go before it is interrupted:
// bound × its elements at the rate it is held to, plus one latency (the
// p99 if it is lognormal) and boundSlack; 0 without a bound.
func (sc scenario) deadline() time.Duration {
	if sc.bound <= 0 || !sc.bounded() {
		return 0
	}
	ideal := time.Duration(sc.bound * float64(sc.elements) / sc.heldTo() * float64(time.Second))
	return ideal + max(sc.server.Latency, sc.server.LatencyP99) + boundSlack
}

// runCrossed runs a crossed scenario as runBounded does, its calls named
// crossedClient by a front before the server, and measures its rates by
// the server's clock.
func runCrossed(ctx context.Context, sc scenario, mode string, srv *testserver.Server, set Settings) (Result, error) {
	front, err := serve(namer{next: srv.Handler, client: crossedClient})
	if err != nil {
		return Result{}, err
	}
	defer front.Close()
	o, err := options(sc, mode, front.url+"/api", generateFlags(sc, set))
	if err != nil {
		return Result{}, err
	}
	r, err := runBounded(ctx, sc, o, srv)
	if err != nil {
		return Result{}, err
	}
	rr := ratesOf(srv.Handler.Stats().Series, srv.Handler.Span(crossedClient), crossedClient)
	r.QuotaRate, r.SteadyRate, r.SteadySeconds, r.RunRate, r.Span = sc.quotaRate(), rr.steady, rr.steadySeconds, rr.run, rr.span.Seconds()
	return r, nil
}

// runRates are the rates of a run's accepted requests, per second.
type runRates struct {
	// steady is over the whole seconds from steadyAfter after the second
	// of the first request to the second of the last accepted one, both
	// included; steadySeconds counts them, 0 if there are none.
	steady        float64
	steadySeconds int
	// run is over span, from the first request to the last accepted one
	// (by the server's clock); 0 if span is not positive.
	run  float64
	span time.Duration
}

// ratesOf computes the rates of client's accepted requests from the
// server's per-second series and the client's span.
func ratesOf(series []testserver.Second, sp testserver.Span, client string) runRates {
	var rr runRates
	if sp.First.IsZero() || sp.LastAccepted.IsZero() {
		return rr
	}
	from, to := sp.First.Unix()+steadyAfter, sp.LastAccepted.Unix()
	var all, steady int64
	for _, s := range series {
		a := s.Clients[client].Accepted
		all += a
		if s.T >= from && s.T <= to {
			steady += a
		}
	}
	if to >= from {
		rr.steadySeconds = int(to - from + 1)
		rr.steady = float64(steady) / float64(rr.steadySeconds)
	}
	if rr.span = sp.LastAccepted.Sub(sp.First); rr.span > 0 {
		rr.run = float64(all) / rr.span.Seconds()
	}
	return rr
}

// namer is an http.Handler in front of next that names every request's
// client (testserver.ClientHeader), so that next counts and times them
// apart.
type namer struct {
	next   http.Handler
	client string
}

func (n namer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Set(testserver.ClientHeader, n.client)
	n.next.ServeHTTP(w, r)
}
