package sim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Suite is a set of runs: every scenario with every algorithm for every
// number of groups.
type Suite struct {
	Scenarios  []Scenario
	Algorithms []Algorithm
	// Groups lists the numbers of groups to run; each run uses
	// Config(g).
	Groups []int
	// Config returns the configuration of the runs with g groups; nil
	// means DefaultConfig.
	Config func(g int) Config
}

// DefaultSuite is the standard report: Scenarios × Algorithms × G ∈ {1, 8}
// with DefaultConfig.
func DefaultSuite() Suite {
	return Suite{Scenarios: Scenarios(), Algorithms: Algorithms(), Groups: []int{1, 8}}
}

// Run runs every combination, in parallel on up to GOMAXPROCS goroutines,
// and returns the results ordered by scenario, then groups, then algorithm.
// The results do not depend on the parallelism.
func (s Suite) Run() ([]Result, error) {
	conf := s.Config
	if conf == nil {
		conf = DefaultConfig
	}
	type job struct {
		i   int
		sc  Scenario
		alg Algorithm
		cfg Config
	}
	var jobs []job
	for _, sc := range s.Scenarios {
		for _, g := range s.Groups {
			for _, alg := range s.Algorithms {
				jobs = append(jobs, job{len(jobs), sc, alg, conf(g)})
			}
		}
	}
	results := make([]Result, len(jobs))
	errs := make([]error, len(jobs))
	ch := make(chan job)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for j := range ch {
				results[j.i], errs[j.i] = Run(j.sc, j.alg, j.cfg)
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}

// WriteMarkdown writes one table per scenario: a row per algorithm and
// number of groups with utilisation, waste, client-rejected share and the
// recovery time after each change. results must be ordered as Suite.Run
// orders them.
func WriteMarkdown(w io.Writer, scenarios []Scenario, results []Result) error {
	var b strings.Builder
	for _, sc := range scenarios {
		fmt.Fprintf(&b, "### %s\n\n%s.", sc.Name, sc.Title)
		if sc.WarmUp > 0 {
			fmt.Fprintf(&b, " Metrics leave out the first %d s.", int(sc.WarmUp/time.Second))
		}
		b.WriteString("\n\n")
		changes := changeNames(sc)
		b.WriteString("| algorithm | G | utilisation | waste | client-rejected |")
		for _, c := range changes {
			fmt.Fprintf(&b, " recovery %s |", c)
		}
		b.WriteString("\n|---|--:|--:|--:|--:|")
		for range changes {
			b.WriteString("--:|")
		}
		b.WriteString("\n")
		for _, r := range results {
			if r.Scenario != sc.Name {
				continue
			}
			m := r.Metrics
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |", r.Algorithm, r.Groups,
				percent(m.Utilisation), percent(m.Waste), percent(m.ClientRejectedShare))
			for i := range changes {
				fmt.Fprintf(&b, " %s |", recoveryText(m.Recovery[i]))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// changeNames names the measured changes of a scenario by their time.
func changeNames(sc Scenario) []string {
	var names []string
	for i := 1; i < len(sc.Phases); i++ {
		names = append(names, "at "+formatMinutes(sc.Phases[i].At))
	}
	return names
}

func formatMinutes(d time.Duration) string {
	m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
	if s == 0 {
		return fmt.Sprintf("%d:00", m)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// spaced formats d with a space before the unit, as in "500 µs".
func spaced(d time.Duration) string {
	s := d.String()
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return s
	}
	return s[:i] + " " + s[i:]
}

func percent(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

func recoveryText(r Recovery) string {
	switch {
	case !r.Measured:
		return "–"
	case r.Time < 0:
		return "never"
	}
	return fmt.Sprintf("%d s", int(r.Time/time.Second))
}

// ReportFile is the name of the markdown report WriteReport writes.
const ReportFile = "results.md"

// WriteReport writes the report of a suite's results to dir: ReportFile,
// with the setup, advice on which mode to choose, the new mode against its
// goals and one table per scenario, and one plot per scenario,
// <scenario>.<format>, format being "svg" or "png". command is the command
// line that made the report, quoted in it. dir must exist.
func WriteReport(dir, command, format string, s Suite, results []Result) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("sim: unknown plot format %q (want svg or png)", format)
	}
	var b strings.Builder
	writeReportHead(&b, command, s)
	writeGoals(&b, s, results)
	b.WriteString("## Scenarios\n\n")
	var tables strings.Builder
	if err := WriteMarkdown(&tables, s.Scenarios, results); err != nil {
		return err
	}
	// Put each scenario's plot under its table.
	parts := strings.Split(tables.String(), "### ")
	for _, part := range parts[1:] {
		name, _, _ := strings.Cut(part, "\n")
		b.WriteString("### " + part)
		fmt.Fprintf(&b, "![%s: accepted, backend-rejected and client-rejected per second, per algorithm](%s.%s)\n\n", name, name, format)
	}
	if err := writeFile(dir, ReportFile, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	}); err != nil {
		return err
	}
	for _, sc := range s.Scenarios {
		if err := writeFile(dir, sc.Name+"."+format, func(w io.Writer) error { return WritePlot(w, format, sc, results) }); err != nil {
			return err
		}
	}
	return nil
}

func writeReportHead(b *strings.Builder, command string, s Suite) {
	conf := s.Config
	if conf == nil {
		conf = DefaultConfig
	}
	c := conf(1).withDefaults()
	fmt.Fprintf(b, `# Throttling quality: simulation results

Written by %s (package sim); do not edit by hand. The simulation is
deterministic: the same seed (%#x) and code give the same numbers and plots.

## Setup

- **Backend**: a token bucket of %.0f requests/s holding %s of capacity (like the test
  server's quota), shared by all groups; a rejection carries a Retry-After of whole
  seconds, at least one. During an outage it rejects everything.
- **Load**: Poisson arrivals at the offered rate, spread evenly over G groups (G = 1 and
  8), each with its own throttle, as the transform's groups are.
- **Transform model**: each group runs the batch loop of transforms/throttle: its timer
  fires %s after the first element arrives in an empty buffer; a firing decides on up
  to %d buffered elements one by one, with one call in flight (%s latency) and up to
  %s of random start-up delay; throttled elements are routed out, not retried.
  Groups therefore drift in and out of step with each other.
- **Metrics** leave out the first minute of each 10-minute run. *Utilisation* is calls
  accepted divided by the integral of min(offered rate, capacity), so 100 %% is all a
  perfect client could get accepted (arrivals are random, so a little above 100 %% is
  possible); *waste* is calls the backend rejected divided by calls sent;
  *client-rejected* is elements rejected locally divided by elements offered;
  *recovery* is the time after a change until utilisation is back at 90 %% (the end of
  the first second from which three seconds in a row reach 90 %% together).
- **Algorithms**:
`, "`"+command+"`", c.Seed, c.Capacity, spaced(c.BackendBurst), spaced(c.BatchInterval), c.BatchSize,
		spaced(c.Latency), spaced(c.StartJitter))
	for _, a := range s.Algorithms {
		fmt.Fprintf(b, "  - `%s`: %s.\n", a.Name, a.Description)
	}
	b.WriteString(`
## Which mode to choose

- **adaptive.ModePaced** (Config.Mode; the transform's option and flag select it) when
  the backend enforces a quota or rate limit and answers overload with 429 /
  RESOURCE_EXHAUSTED: under sustained overload it sends a few per cent more than the
  backend accepts instead of twice as much, so only about 2.5–4 % of the calls sent
  are rejected rather than half; it rejects nothing locally while the backend is not
  overloaded; it is back at full use of a doubled quota within about 7–8 s with one
  group (10 s with eight), and after a burst or an outage within seconds. In the
  batch transform set its
  Interval to the batch interval and its Burst to at least that.
- **adaptive.ModeSRE with K = 2** (the default; the SRE book's formula, what the
  original tool did) when backend rejections are cheap and simplicity matters more
  than waste: it keeps two counters and nothing else, and uses a raised quota or an
  ended outage at once, but about half of all calls sent under sustained overload are
  rejected, and after a burst its window still holds the burst's rejections (half a
  minute with the fixed window, two minutes with the sliding one).
- **ModeSRE with a low K** (such as 1.1) is not recommended: it wastes less (about
  9 %), but it takes minutes to use a raised quota and, with a two-minute sliding
  window, does not recover within the run after a burst or an outage.
- **Groups**: each group throttles on its own evidence. With G = 8 groups sharing
  100 requests/s the paced mode's rejections per group are sparse, and the groups do
  not share the backend evenly: those whose batches come just after the backend
  refilled see no rejections and grow, while the others take the rejections and
  shrink, some to a few requests a second. So it wastes a little more (3–4.6 %), and
  filling a doubled quota takes longer, since the small groups must grow several-fold:
  10 s here; with 100 other seeds 5–17 s, a median of 9 s, within the goal of 10 s in
  four runs out of five (one group: 7–8 s with every seed). Use as few groups as
  the throughput needs (a group carries at most BatchSize per BatchInterval).

`)
}

func writeGoals(b *strings.Builder, s Suite, results []Result) {
	b.WriteString("## The paced mode against its goals\n\n")
	b.WriteString("Goals from issue 5; ✓ met, ✗ not met.\n\n")
	b.WriteString("| scenario | G | goals |\n|---|--:|---|\n")
	for _, sc := range s.Scenarios {
		for _, r := range results {
			if r.Scenario != sc.Name || r.Algorithm != Paced {
				continue
			}
			var cells []string
			for _, c := range sc.Goal.Check(sc, r.Metrics) {
				mark := "✓"
				if !c.Met {
					mark = "✗"
				}
				cells = append(cells, fmt.Sprintf("%s %s: %s", mark, c.Goal, c.Got))
			}
			fmt.Fprintf(b, "| %s | %d | %s |\n", sc.Name, r.Groups, strings.Join(cells, "; "))
		}
	}
	b.WriteString("\n")
}

// writeFile creates dir/name and writes it with write.
func writeFile(dir, name string, write func(io.Writer) error) error {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
