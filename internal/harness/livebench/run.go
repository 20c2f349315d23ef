package livebench

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/competitor"
	"github.com/beamthrottle/beamthrottle/internal/report"
	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// Settings shape every run: cmd/livebench's -duration and -competitor.
type Settings struct {
	Scenarios  string        // comma-separated scenario names; "" for all, "-" for none (rewrite the report)
	Modes      string        // comma-separated throttle modes each scenario runs in
	Duration   time.Duration // how long the source of a streaming run emits
	Competitor float64       // the competitor's rate, × the quota's
	Out        string        // the report's directory; "" for none
}

// runOne runs scenario sc in mode in real time and measures it.
func runOne(ctx context.Context, sc scenario, mode string, set Settings) (Result, error) {
	cfg := sc.server
	if cfg.Mode == testserver.FixedWindow && cfg.WindowJitter == 0 {
		// Windows start when the handler is made: on a whole second, the
		// server's per-second series counts whole windows. Drifting
		// windows start at a random phase of their own, which waiting for
		// a whole second would not change: they are left unaligned.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	}
	start := time.Now()
	srv, err := testserver.NewServer(cfg)
	if err != nil {
		return Result{}, err
	}
	defer srv.Close()

	var r Result
	switch {
	case sc.priority():
		r, err = runPriority(ctx, sc, mode, srv, set)
	case sc.isCrossed():
		r, err = runCrossed(ctx, sc, mode, srv, set)
	default:
		var o pipeline.Options
		if o, err = options(sc, mode, srv.Endpoint(), generateFlags(sc, set)); err != nil {
			return Result{}, err
		}
		if sc.bounded() {
			r, err = runBounded(ctx, sc, o, srv)
		} else {
			r, err = runStreaming(ctx, sc, o, srv, set, start)
		}
	}
	r.Scenario, r.Mode, r.Measured = sc.name, mode, time.Now().UTC().Truncate(time.Second)
	return r, err
}

// generateFlags are the source flags of the built-in generator for sc: its
// elements, or its rate for the run's duration.
func generateFlags(sc scenario, set Settings) []string {
	if sc.bounded() {
		return []string{fmt.Sprintf("--generate=%d", sc.elements)}
	}
	d := sc.runFor(set.Duration)
	return []string{fmt.Sprintf("--generate=%d", int(sc.rate*d.Seconds())), fmt.Sprintf("--generate_rate=%g", sc.rate)}
}

// options sets the pipeline's flags for sc as a user would: the flag
// defaults, with the source's flags, the URL, the mode and the scenario's
// flags.
func options(sc scenario, mode, url string, source []string) (pipeline.Options, error) {
	fs := flag.NewFlagSet("livebench", flag.ContinueOnError)
	o := pipeline.RegisterFlags(fs)
	args := append([]string{"--url=" + url, "--throttle_mode=" + mode}, source...)
	for _, f := range []struct {
		name string
		v    any
		set  bool
	}{
		{"groups", sc.groups, sc.groups != 0},
		{"batch_size", sc.batch, sc.batch != 0},
		{"batch_interval", sc.interval, sc.interval != 0},
		{"calls_in_flight", sc.callsInFlight, sc.callsInFlight != 0},
		{"max_buffered", sc.maxBuffered, sc.maxBuffered != 0},
		{"max_wait", sc.maxWait, sc.maxWait != 0},
		{"call_timeout", sc.callTimeout, sc.callTimeout != 0},
	} {
		if f.set {
			args = append(args, fmt.Sprintf("--%s=%v", f.name, f.v))
		}
	}
	prefix := filepath.Join(os.TempDir(), "beamthrottle-livebench", sc.name+"-"+mode) + "/"
	os.RemoveAll(prefix)
	args = append(args, "--output_prefix="+prefix)
	if err := fs.Parse(args); err != nil {
		return pipeline.Options{}, err
	}
	return *o, o.Validate()
}

// runBounded runs a bounded input to its end, or to sc's deadline if it
// has one (scenario.deadline): the run is then interrupted (see
// pipeline.Run) and its Result marked Stopped.
func runBounded(ctx context.Context, sc scenario, o pipeline.Options, srv *testserver.Server) (Result, error) {
	p := report.NewProgress(nil, 0)
	stop := reportClientThrottled(srv, p)
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if d := sc.deadline(); d > 0 {
		runCtx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	began := time.Now()
	sum, err := pipeline.Run(runCtx, o, p)
	elapsed := time.Since(began)
	stop()
	stopped := ctx.Err() == nil && runCtx.Err() != nil
	if err != nil && !stopped {
		return Result{}, err
	}
	r := measureBounded(sc, sum, srv.Handler.Stats(), elapsed)
	r.Stopped = stopped
	return r, nil
}

// runStreaming runs a streaming source for its duration, with the
// scenario's change and competitor, and measures the seconds the source
// emitted in. serverStart is when the server (and its windows) started.
func runStreaming(ctx context.Context, sc scenario, o pipeline.Options, srv *testserver.Server, set Settings, serverStart time.Time) (Result, error) {
	d := sc.runFor(set.Duration)
	q := sc.quotaRate()
	steps := []rateStep{{at: serverStart, rate: q}}
	var changeAt time.Time
	var mu sync.Mutex // guards steps and changeAt

	p := report.NewProgress(nil, 0)
	stopReports := reportClientThrottled(srv, p)
	cctx, stopCompetitor := context.WithCancel(ctx)
	var competing sync.WaitGroup
	if sc.competitor {
		competing.Go(func() { competitor.Run(cctx, srv.Endpoint(), competitorName, set.Competitor*q) })
	}

	// Apply the change once the pipeline has been sending for its share of
	// the run.
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if sc.change == 0 {
			return
		}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		var first time.Time
		var outageEnd time.Time
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				if first.IsZero() {
					if _, ok := firstPipelineSecond(srv.Handler.Stats().Series); ok {
						first = now
					}
					continue
				}
				switch {
				case outageEnd.IsZero() && !now.Before(first.Add(time.Duration(sc.change*float64(d)))):
					mu.Lock()
					if sc.outageFor > 0 {
						srv.Handler.SetOutage(http.StatusTooManyRequests)
						steps = append(steps, rateStep{at: now, rate: 0})
						outageEnd = now.Add(sc.outageFor)
					} else {
						srv.Handler.SetQuota(sc.newQuota, time.Second)
						steps = append(steps, rateStep{at: now, rate: float64(sc.newQuota)})
						changeAt = now
					}
					mu.Unlock()
					if sc.outageFor == 0 {
						return
					}
				case !outageEnd.IsZero() && !now.Before(outageEnd):
					mu.Lock()
					srv.Handler.SetOutage(0)
					steps = append(steps, rateStep{at: now, rate: q})
					changeAt = now // recovery is measured from the end of the outage
					mu.Unlock()
					return
				}
			}
		}
	}()

	_, err := pipeline.Run(ctx, o, p)
	close(stop)
	<-done
	stopCompetitor()
	competing.Wait()
	stopReports()
	if err != nil {
		return Result{}, err
	}

	st := srv.Handler.Stats()
	sr := streamRun{series: st.Series, steps: steps, offered: sc.rate, changeAt: changeAt}
	if sc.newQuota > 0 {
		sr.recoverTo = min(float64(sc.newQuota), sc.rate)
	} else {
		sr.recoverTo = min(q, sc.rate)
	}
	if sc.windows > 0 {
		// Whole windows from the server's start, which is just after a
		// whole second.
		sr.from = serverStart.Unix()
		sr.to = sr.from + int64(d/time.Second)
	} else {
		first, ok := firstPipelineSecond(st.Series)
		if !ok {
			return Result{}, fmt.Errorf("the pipeline sent no call")
		}
		sr.from, sr.to = first+1, first+int64(d/time.Second)
	}
	r := sr.measure()
	r.Duration = d.String()
	if sc.competitor {
		r.Competitor = set.Competitor
	}
	return r, nil
}

// reportClientThrottled reports the pipeline's client-side throttles to
// the server each second, for its page and per-second series, until the
// returned func is called (which reports the last ones), as p counts them.
func reportClientThrottled(srv *testserver.Server, p *report.Progress) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	var reported int64
	report := func() {
		ct := p.Counts()[pipeline.OutClientThrottled]
		srv.Handler.ReportClientThrottled(max(ct-reported, 0))
		reported = max(ct, reported)
	}
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				report()
				return
			case <-t.C:
				report()
			}
		}
	}()
	return func() { close(quit); <-done }
}
