package quotabench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/competitor"
	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// Result is one scenario's run.
type Result struct {
	Scenario Scenario
	// Elements is what each process generated, at Rate per second.
	Elements int
	Rate     float64
	// Measure is what the quota server saw.
	Measure Measure
	// Procs are the pipeline processes, in order p1, p2, ...
	Procs []Proc
	// FaultFrom and FaultTo bound the fault in Unix seconds (FaultTo
	// exclusive), for RedisDown and RateLimitDown; Before, During and
	// After split the busy window there.
	FaultFrom, FaultTo    int64
	Before, During, After Phase
	// QuotaWarnings counts the log lines in which the processes said the
	// quota's service did not answer (the throttle logs one a minute at
	// most per process).
	QuotaWarnings int
	// ProxyChunks counts the chunks the delaying proxy forwarded
	// (RateLimitSlow).
	ProxyChunks int64
	// First and LastAccepted are, in a strict scenario, when the quota
	// server saw the pipelines' first call and their last accepted one
	// (testserver.Handler.Span); zero if it saw none.
	First, LastAccepted time.Time
	// QuotaRate is a strict scenario's configured quota per second, all
	// processes together, or the API's rate without one: the pace that
	// TimeRatio measures against.
	QuotaRate float64
	// Tiers are, in a priority scenario, its processes' demands and what
	// the server accepted of them, in the order of Scenario.Tiers.
	Tiers []TierShare `json:",omitempty"`
	// SteadyFrom and SteadyTo bound, in a priority scenario, the whole
	// seconds (Unix, inclusive) over which its calls per second are
	// measured: from the first whole second steadyAfter after its source's
	// first timed element to the second of its last; zero if it published
	// none.
	SteadyFrom, SteadyTo int64 `json:",omitempty"`
	// TimedOut says that the run's deadline (Scenario.Deadline) killed
	// processes still going; its targets are then missed.
	TimedOut bool `json:",omitempty"`
	// Run is which run of its scenario this is, from 1, when the scenario
	// runs more than once (Scenario.Runs); else 0.
	Run int `json:",omitempty"`
	// Problem says what went wrong with the harness or a process, if
	// anything.
	Problem string
	// Command and When are the run that measured this result when it is
	// not the run the report's Header describes: cmd/quotabench keeps
	// the results of earlier runs when it runs some scenarios only.
	Command string    `json:",omitempty"`
	When    time.Time `json:",omitzero"`
}

// Proc is one pipeline process of a run.
type Proc struct {
	Name      string
	Summary   Summary
	SummaryOK bool
	Outputs   Outputs
	// Conserved: every generated element is in exactly one output.
	Conserved bool
	Elapsed   time.Duration
	// LastAccepted is, in a strict scenario, when the server accepted the
	// process's last call; zero if none.
	LastAccepted time.Time `json:",omitzero"`
}

// Conserved reports whether every process of r accounted for each of its
// elements exactly once.
func (r Result) Conserved() bool {
	if len(r.Procs) == 0 {
		return false
	}
	for _, p := range r.Procs {
		if !p.Conserved {
			return false
		}
	}
	return true
}

// bench holds what every scenario shares: the pipeline binary, the quota
// services and the delaying proxy. The services are nil when no scenario
// uses them.
type bench struct {
	set    Settings
	dir    string
	bin    string
	redis  *services.Redis     // the Redis quota
	rlData *services.Redis     // the rate-limit service's own Redis
	rl     *services.RateLimit // Envoy's rate-limit service
	slow   *delayProxy         // to rl, late
	log    io.Writer
}

// Run builds cmd/beamthrottle, starts redis-server and Envoy's rate-limit
// service if a scenario uses them, runs the scenarios one after the other,
// and returns their results. Progress goes to log. It needs the repository
// (RepoRoot), the go command and, for the redis and envoy scenarios,
// redis-server.
func Run(ctx context.Context, set Settings, scenarios []Scenario, log io.Writer) ([]Result, error) {
	b := &bench{set: set.withDefaults(), log: log}
	dir, err := os.MkdirTemp("", "quotabench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	b.dir = dir
	root, err := services.RepoRoot()
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(log, "building cmd/beamthrottle...")
	b.bin = filepath.Join(dir, "beamthrottle")
	build := exec.CommandContext(ctx, "go", "build", "-o", b.bin, "./cmd/beamthrottle")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("quotabench: building cmd/beamthrottle: %v\n%s", err, out)
	}
	if uses(scenarios, "redis") {
		if b.redis, err = services.TryStartRedis(mkdir(dir, "redis")); err != nil {
			return nil, err
		}
		defer b.redis.Kill()
	}
	if uses(scenarios, "envoy") {
		if b.rlData, err = services.TryStartRedis(mkdir(dir, "redis-rl")); err != nil {
			return nil, err
		}
		defer b.rlData.Kill()
		fmt.Fprintln(log, "starting Envoy's rate-limit service (built on first use)...")
		cfg := filepath.Join(root, "testdata", "ratelimit", "config")
		if b.rl, err = services.TryStartRateLimit(b.rlData.Addr, cfg, mkdir(dir, "ratelimit")); err != nil {
			return nil, err
		}
		defer b.rl.Kill()
		if b.slow, err = startDelayProxy(b.rl.Addr, b.set.SlowDelay); err != nil {
			return nil, err
		}
		defer b.slow.Close()
	}

	var results []Result
	for _, sc := range scenarios {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		for run := range max(sc.Runs, 1) {
			if err := ctx.Err(); err != nil {
				return results, err
			}
			if sc.Runs > 1 {
				run++
				fmt.Fprintf(log, "== %s (run %d of %d): %s\n", sc.Name, run, sc.Runs, sc.Title)
			} else {
				fmt.Fprintf(log, "== %s: %s\n", sc.Name, sc.Title)
			}
			r := b.run(ctx, sc, run)
			fmt.Fprintf(log, "   %s\n", r.line())
			results = append(results, r)
		}
	}
	return results, nil
}

// uses reports whether a scenario has the quota backend.
func uses(scenarios []Scenario, backend string) bool {
	for _, sc := range scenarios {
		if sc.Backend == backend {
			return true
		}
	}
	return false
}

// mkdir makes dir/name and returns it; an error shows when it is used.
func mkdir(dir, name string) string {
	d := filepath.Join(dir, name)
	os.MkdirAll(d, 0o755)
	return d
}

// line is a one-line account of r for the progress log.
func (r Result) line() string {
	m := r.Measure
	s := fmt.Sprintf("accepted %d rejected %d waste %.2f%% utilisation %.1f%% over %d s; conserved %v",
		m.Accepted, m.Rejected, 100*m.Waste, 100*m.Utilisation, m.BusySeconds, r.Conserved())
	if r.Scenario.Strict {
		s = fmt.Sprintf("calls %d, 429 %d, waste %.2f%%, time ratio %.3f (%.1f s ÷ %.1f s), finish spread %.1f%%; conserved %v",
			m.Accepted+m.Rejected, m.Rejected, 100*m.Waste, r.TimeRatio(), r.Span().Seconds(), r.IdealTime().Seconds(),
			100*r.FinishSpread(), r.Conserved())
	}
	if r.Scenario.Crossed {
		s += fmt.Sprintf("; rate %.1f%% of the quota", 100*r.RateShare())
	}
	if r.Scenario.Priority {
		var parts []string
		for _, t := range r.Tiers {
			parts = append(parts, fmt.Sprintf("%s: steady %.2f/s (%.1f%% of its demand) over %d s, accepted %d of %d offered (%.1f%%), 429 %d",
				t.Tier, r.SteadyRate(t), 100*r.SteadyShare(t), r.SteadySeconds(), t.Accepted, t.Offered, 100*t.Share(), t.Rejected))
		}
		s = strings.Join(append(parts, fmt.Sprintf("waste %.2f%%; conserved %v", 100*m.Waste, r.Conserved())), "; ")
	}
	if r.TimedOut {
		s += "; stopped at the deadline"
	}
	if r.Problem != "" {
		s += "; " + r.Problem
	}
	return s
}

// run runs one scenario against a fresh quota server (or nginx), the
// run-th time (0 if it runs once).
func (b *bench) run(ctx context.Context, sc Scenario, run int) Result {
	set := b.set
	r := Result{Scenario: sc, Elements: set.elements(sc), Rate: set.rate(), Run: run}
	cfg := testserver.Config{Quota: set.Capacity, Period: time.Second}
	deadline := set.duration(sc) + set.MaxWait + 3*time.Minute
	switch {
	case sc.Strict:
		r.Rate, r.QuotaRate = 0, set.quotaRate(sc)
		cfg = testserver.Config{Quota: set.APIRate, Period: time.Second, Mode: testserver.GCRA}
		if sc.Window {
			cfg = testserver.Config{Quota: WindowQuota, Period: time.Minute, Mode: testserver.FixedWindow, Advertise: sc.Advertise,
				Latency: sc.Latency, RefuseAtOnce: sc.RefuseAtOnce, NoRetryAfter: sc.NoRetryAfter}
		}
		deadline = 4*time.Duration(float64(set.elements(sc)*set.procs(sc))/r.QuotaRate*float64(time.Second)) + 3*time.Minute
	case sc.Priority:
		r.Rate, r.QuotaRate = set.quotaRate(sc), set.quotaRate(sc)
		cfg = testserver.Config{Quota: set.APIRate, Period: time.Second, Mode: testserver.GCRA}
		deadline = set.Duration + tierWarmup + tierIdle + set.MaxWait + 3*time.Minute
	}
	if sc.Deadline > 0 {
		deadline = sc.Deadline
	}
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	defer func() { r.Problem = strings.Join(problems, "; ") }()

	srv, err := testserver.NewServer(cfg)
	if err != nil {
		problem("quota server: %v", err)
		return r
	}
	defer srv.Close()
	runName := sc.Name
	if run > 0 {
		runName = fmt.Sprintf("%s-%d", sc.Name, run)
	}
	dir := mkdir(b.dir, runName)
	url := srv.Endpoint()
	var ngx *services.Nginx
	if sc.Nginx {
		if ngx, err = services.TryStartNginx(mkdir(dir, "nginx"), set.APIRate); err != nil {
			problem("nginx: %v", err)
			return r
		}
		defer ngx.Kill()
		url = ngx.URL
	}

	var src *tierSource
	if sc.Priority {
		if src, err = startTierSource(ctx, sc.tiers()); err != nil {
			problem("source: %v", err)
			return r
		}
		defer src.Close()
	}

	n := set.procs(sc)
	clients := make([]string, n)
	procs := make([]*exec.Cmd, n)
	stdouts := make([]*bytes.Buffer, n)
	stderrs := make([]string, n)
	pctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	started := time.Now()
	for i := range procs {
		name := fmt.Sprintf("p%d", i+1)
		if sc.Priority {
			name = sc.tiers()[i]
		}
		clients[i] = name
		stdouts[i] = new(bytes.Buffer)
		stderrs[i] = filepath.Join(dir, name+".stderr")
		errf, err := os.Create(stderrs[i])
		if err != nil {
			problem("%v", err)
			return r
		}
		defer errf.Close()
		args := b.args(sc, url, name, filepath.Join(dir, name)+"/")
		if sc.Priority {
			args = append(args, src.flags(name)...)
		}
		cmd := exec.CommandContext(pctx, b.bin, args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = stdouts[i], errf
		if err := cmd.Start(); err != nil {
			problem("starting %s: %v", name, err)
			return r
		}
		procs[i] = cmd
	}
	done := make(chan struct{})
	waitErrs := make([]error, len(procs))
	elapsed := make([]time.Duration, len(procs))
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for i, cmd := range procs {
			wg.Go(func() {
				waitErrs[i] = cmd.Wait()
				elapsed[i] = time.Since(started)
			})
		}
		wg.Wait()
	}()

	var compWG sync.WaitGroup
	compCtx, stopComp := context.WithCancel(ctx)
	defer stopComp()
	if sc.Competitor > 0 {
		compWG.Go(func() { competitor.Run(compCtx, srv.Endpoint(), competitorName, sc.Competitor*float64(set.Capacity)) })
	}

	if sc.Fault == RedisDown || sc.Fault == RateLimitDown {
		if err := b.fault(ctx, sc, srv.Handler, clients, done, &r); err != nil {
			problem("fault: %v", err)
		}
	}
	var pub sent
	if sc.Priority {
		if pub, err = src.run(ctx, srv.Handler, set.offered(sc), r.QuotaRate, done); err != nil {
			problem("source: %v", err)
		}
	}
	<-done
	r.TimedOut = errors.Is(pctx.Err(), context.DeadlineExceeded)
	stopComp()
	compWG.Wait()
	if sc.Fault == RateLimitSlow {
		r.ProxyChunks = b.slow.Chunks()
	}

	stats, spans := srv.Handler.Stats(), srv.Handler.Span
	if ngx != nil {
		reqs, err := ngx.Log()
		if err != nil {
			problem("%v", err)
		}
		var byClient map[string]testserver.Span
		stats, byClient = nginxStats(reqs)
		spans = func(c string) testserver.Span { return byClient[c] }
	}
	r.Measure = measure(stats, clients, float64(cfg.Quota)/cmp.Or(cfg.Period, time.Second).Seconds())
	if sc.Strict {
		r.First, r.LastAccepted = span(spans, clients)
	}
	if r.FaultFrom != 0 {
		r.Before, r.During, r.After = phases(r.Measure, r.FaultFrom, r.FaultTo)
	}
	if sc.Priority {
		// What was published, the same to every process; less than
		// planned if the source stopped early.
		r.Elements = 0
		if len(pub.offered) > 0 {
			r.Elements = pub.offered[0]
		}
		if !pub.first.IsZero() {
			r.SteadyFrom, r.SteadyTo = pub.first.Add(steadyAfter).Unix()+1, pub.last.Unix()
		}
		r.Tiers = tierShares(srv.Handler.Stats(), clients, pub.offered, seconds{r.SteadyFrom, r.SteadyTo})
	}
	for i, name := range clients {
		p := Proc{Name: name, Elapsed: elapsed[i]}
		if sc.Strict {
			p.LastAccepted = spans(name).LastAccepted
		}
		p.Summary, p.SummaryOK = parseSummary(stdouts[i].String())
		if p.Outputs, err = countOutputs(filepath.Join(dir, name)); err != nil {
			problem("%s outputs: %v", name, err)
		}
		p.Conserved = conserved(r.Elements, p.Summary, p.SummaryOK, !sc.Priority, p.Outputs)
		if waitErrs[i] != nil {
			problem("%s: %v (stderr: %s)", name, waitErrs[i], tail(stderrs[i]))
		}
		r.QuotaWarnings += countMatches(stderrs[i], "did not answer")
		r.Procs = append(r.Procs, p)
	}
	return r
}

// span is when the server saw the clients' first call and their last
// accepted one, from each client's span.
func span(spans func(client string) testserver.Span, clients []string) (first, lastAccepted time.Time) {
	for _, c := range clients {
		sp := spans(c)
		if !sp.First.IsZero() && (first.IsZero() || sp.First.Before(first)) {
			first = sp.First
		}
		if sp.LastAccepted.After(lastAccepted) {
			lastAccepted = sp.LastAccepted
		}
	}
	return first, lastAccepted
}

// args are the command-line flags of one pipeline process, as a user would
// pass them.
func (b *bench) args(sc Scenario, url, client, prefix string) []string {
	set := b.set
	if sc.Strict {
		return b.strictArgs(sc, url, client, prefix)
	}
	if sc.Priority {
		return b.priorityArgs(sc, url, client, prefix)
	}
	a := []string{
		fmt.Sprintf("--generate=%d", set.elements(sc)),
		fmt.Sprintf("--generate_rate=%g", set.rate()),
		"--url=" + url,
		"--header=" + testserver.ClientHeader + ": " + client,
		"--output_prefix=" + prefix,
		"--max_wait=" + set.MaxWait.String(),
		"--quota_backend=" + sc.Backend,
	}
	switch sc.Backend {
	case "redis":
		a = append(a, "--quota_address="+b.redis.Addr, "--quota_key=bench",
			fmt.Sprintf("--quota_rate=%d/s", set.Capacity))
	case "envoy":
		addr := b.rl.Addr
		if sc.Fault == RateLimitSlow {
			addr = b.slow.Addr
		}
		a = append(a, "--quota_address="+addr, "--quota_key=bench",
			"--quota_domain=beamthrottle", "--quota_descriptors=bench=shared")
	}
	if sc.Backend != "none" {
		a = append(a, "--quota_fail="+sc.fail())
	}
	if sc.BatchInterval > 0 {
		a = append(a, "--batch_interval="+sc.BatchInterval.String())
	}
	return a
}

// strictArgs are args in a strict scenario: the elements all at once,
// --max_wait=auto, and the quota at its share of the API's rate. Each
// scenario has its own --quota_key, so that none inherits another's
// reservations.
func (b *bench) strictArgs(sc Scenario, url, client, prefix string) []string {
	set := b.set
	a := []string{
		fmt.Sprintf("--generate=%d", set.elements(sc)),
		"--url=" + url,
		"--header=" + testserver.ClientHeader + ": " + client,
		"--output_prefix=" + prefix,
		"--max_wait=auto",
		"--quota_backend=" + sc.Backend,
	}
	switch sc.Backend {
	case "redis":
		a = append(a, "--quota_address="+b.redis.Addr, "--quota_key="+sc.Name,
			"--quota_rate="+rateFlag(set.quotaRate(sc)), "--quota_fail=open")
	case "local":
		a = append(a, "--quota_rate="+rateFlag(set.quotaRate(sc)/float64(set.procs(sc))))
	case "envoy":
		a = append(a, "--quota_address="+b.rl.Addr, "--quota_key="+sc.Name,
			"--quota_domain=beamthrottle", "--quota_descriptors=bench=strict", "--quota_fail=open")
	}
	return a
}

// priorityArgs are args in a priority scenario, but for the source's
// flags (tierSource.flags): a streaming run's --max_wait, and the Redis
// quota of slots at its share of the API's rate, on a --quota_key of the
// scenario's own, with the scenario's --quota_high_share.
func (b *bench) priorityArgs(sc Scenario, url, client, prefix string) []string {
	a := []string{
		"--url=" + url,
		"--header=" + testserver.ClientHeader + ": " + client,
		"--output_prefix=" + prefix,
		"--max_wait=" + b.set.MaxWait.String(),
		"--quota_backend=redis",
		"--quota_address=" + b.redis.Addr,
		"--quota_key=" + sc.Name,
		"--quota_rate=" + rateFlag(b.set.quotaRate(sc)),
		"--quota_fail=open",
	}
	if sc.HighShare > 0 {
		a = append(a, fmt.Sprintf("--quota_high_share=%g", sc.HighShare))
	}
	return a
}

// fault waits until every pipeline process calls the server, then, FaultAt
// later, kills the scenario's service and restarts it FaultFor after that.
func (b *bench) fault(ctx context.Context, sc Scenario, h *testserver.Handler, clients []string, done <-chan struct{}, r *Result) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !allCalling(h.Stats(), clients) {
		select {
		case <-done:
			return errors.New("the processes ended before all of them called the server")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	sleep := func(d time.Duration) error {
		select {
		case <-done:
			return errors.New("the processes ended before the fault was over")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	if err := sleep(b.set.FaultAt); err != nil {
		return err
	}
	kill, restart := b.redis.Kill, b.redis.TryRestart
	if sc.Fault == RateLimitDown {
		kill, restart = b.rl.Kill, b.rl.TryRestart
	}
	from := time.Now()
	kill()
	fmt.Fprintf(b.log, "   %s: killed\n", sc.Fault)
	err := sleep(b.set.FaultFor)
	if rerr := restart(); rerr != nil {
		return errors.Join(err, rerr)
	}
	to := time.Now()
	fmt.Fprintf(b.log, "   %s: restarted after %v\n", sc.Fault, to.Sub(from).Round(time.Millisecond))
	r.FaultFrom, r.FaultTo = from.Unix(), to.Unix()+1
	return err
}

// allCalling reports whether every client has called the server.
func allCalling(st testserver.Stats, clients []string) bool {
	for _, c := range clients {
		n := st.Clients[c]
		if n.Accepted+n.Rejected+n.Errors == 0 {
			return false
		}
	}
	return true
}

// countMatches counts the lines of the file at path that contain s.
func countMatches(path, s string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// tail is the end of the file at path, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}
