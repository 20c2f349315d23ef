package sim

import (
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// families returns the families of cases, in order of first appearance.
func families(cases []Case) []string {
	var fs []string
	for _, c := range cases {
		if !slices.Contains(fs, c.Family) {
			fs = append(fs, c.Family)
		}
	}
	return fs
}

// WriteMarkdown writes one table per family of cases: a row per case,
// algorithm and number of groups with utilisation, waste, client-rejected
// share, fairness, queueing delays of successes, recovery after each change
// and the goals (✓, or the goals missed with what the run got), then, for
// the runs against a backend with several limits (Result.Limits), each
// limit's use per window and refusals. results must be ordered as
// Suite.Run orders them.
func WriteMarkdown(w io.Writer, cases []Case, results []Result) error {
	var b strings.Builder
	for _, f := range families(cases) {
		fmt.Fprintf(&b, "### %s\n\n", f)
		writeFamily(&b, f, cases, results)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFamily writes the case list and the table of family f.
func writeFamily(b *strings.Builder, f string, cases []Case, results []Result) {
	recoveries, slow := false, false
	for _, c := range cases {
		if c.Family != f {
			continue
		}
		fmt.Fprintf(b, "- `%s`: %s; %s.\n", c.Name, c.Title, setup(c))
		recoveries = recoveries || len(c.Scenario.Phases) > 1
		slow = slow || c.Config.SizeCalls || c.Config.CallTimeout > 0
	}
	b.WriteString("\n| case | algorithm | G | utilisation | waste | client-rejected | fairness | delay p50 | delay p99 |")
	if slow {
		b.WriteString(" timed out | answer p99 | done |")
	}
	if recoveries {
		b.WriteString(" recovery |")
	}
	b.WriteString(" goals |\n|---|---|--:|--:|--:|--:|--:|--:|--:|")
	if slow {
		b.WriteString("--:|--:|--:|")
	}
	if recoveries {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	for c, r := range familyRuns(f, cases, results) {
		m := r.Metrics
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s |", c.Name, r.Algorithm, r.Groups,
			percent(m.Utilisation), percent(m.Waste), percent(m.ClientRejectedShare), fairnessText(m.Fairness),
			delayText(m.DelayP50), delayText(m.DelayP99))
		if slow {
			fmt.Fprintf(b, " %d | %s | %s |", m.TimedOut, delayText(m.AnswerP99), drainText(m))
		}
		if recoveries {
			var rs []string
			for i, rc := range m.Recovery {
				rs = append(rs, fmt.Sprintf("%s: %s", formatMinutes(c.Scenario.Phases[i+1].At), recoveryText(rc)))
			}
			if len(rs) == 0 {
				rs = []string{"–"}
			}
			fmt.Fprintf(b, " %s |", strings.Join(rs, ", "))
		}
		fmt.Fprintf(b, " %s |\n", Misses(r.Checks))
	}
	b.WriteString("\n")
	writeLimits(b, f, cases, results)
}

// writeLimits writes, for the runs of family f against a backend with
// several limits, a row per limit: its use in each window and the
// requests it refused. It writes nothing if there are none.
func writeLimits(b *strings.Builder, f string, cases []Case, results []Result) {
	var rows []string
	for c, r := range familyRuns(f, cases, results) {
		for _, l := range r.Limits {
			use := make([]string, len(l.Use))
			for i, u := range l.Use {
				use[i] = percent(u)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | %s | %d |\n", c.Name, r.Algorithm, r.Groups, l.Name,
				strings.Join(use, ", "), l.Refused))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("Backends with several limits: the share of each limit used in each of its windows, in order (over 100 % " +
		"where the last requests of a window overdrew it), and the requests each limit refused (a request counted against the " +
		"first limit that refused it).\n\n")
	b.WriteString("| case | algorithm | G | limit | use per window | refused |\n|---|---|--:|---|---|--:|\n")
	for _, row := range rows {
		b.WriteString(row)
	}
	b.WriteString("\n")
}

// familyRuns yields the runs of the cases of family f, case by case in
// the order of cases, each case's runs in the order of results.
func familyRuns(f string, cases []Case, results []Result) iter.Seq2[Case, Result] {
	return func(yield func(Case, Result) bool) {
		for _, c := range cases {
			if c.Family != f {
				continue
			}
			for _, r := range results {
				if r.Case == c.Name && !yield(c, r) {
					return
				}
			}
		}
	}
}

// setup describes a case's configuration in a few words.
func setup(c Case) string {
	cfg := c.Config.withDefaults()
	s := fmt.Sprintf("%g requests/s, %s latency, %d in flight", cfg.Capacity, spaced(cfg.Latency), cfg.CallsInFlight)
	if cfg.SizeCalls {
		s = fmt.Sprintf("%.4g requests/s, %s latency, calls in flight sized to the pace (up to %d, a ceiling per worker)",
			cfg.Capacity, spaced(cfg.Latency), cfg.CallsInFlight)
	}
	if cfg.CallTimeout > 0 {
		s += ", call timeout " + spaced(cfg.CallTimeout)
	}
	if cfg.MaxWait > 0 {
		s += ", max wait " + spaced(cfg.MaxWait)
	}
	if cfg.FinalThrottled {
		s += ", a 429 is final"
	}
	s += fmt.Sprintf("; metrics after %d s of %d s", int(c.Scenario.WarmUp/time.Second), int(c.Scenario.Duration/time.Second))
	if g := c.Goal.String(); g != "" {
		s += "; goals: " + g
	}
	return s
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
	s := compact(d)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return s
	}
	return s[:i] + " " + s[i:]
}

func percent(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }

func delayText(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

// drainText is when a bounded input was done, and how many times its
// ideal time that is; "–" if it was not.
func drainText(m Metrics) string {
	if m.Drained < 0 || m.IdealDrain <= 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%.3f ×)", delayText(m.Drained), ratio(m.Drained.Seconds(), m.IdealDrain.Seconds()))
}

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

// PlotFamilies are the families whose cases WriteReport plots.
var PlotFamilies = []string{FamilyClassic}

// WriteReport writes the report of a suite's results to dir: ReportFile,
// with the setup, the goals at a glance and one table per family, and one
// plot per case of the PlotFamilies, <case>.<format>, format being "svg"
// or "png". command is the command line that made the report, quoted in
// it. dir must exist.
func WriteReport(dir, command, format string, s Suite, results []Result) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("sim: unknown plot format %q (want svg or png)", format)
	}
	var b strings.Builder
	writeReportHead(&b, command, s)
	writeGlance(&b, s, results)
	for _, f := range families(s.Cases) {
		fmt.Fprintf(&b, "## %s\n\n", f)
		writeFamily(&b, f, s.Cases, results)
		if !slices.Contains(PlotFamilies, f) {
			continue
		}
		for _, c := range s.Cases {
			if c.Family == f {
				fmt.Fprintf(&b, "![%s: accepted, backend-rejected and client-rejected per second, per algorithm](%s.%s)\n\n",
					c.Name, plotName(c.Name), format)
			}
		}
	}
	if err := writeFile(dir, ReportFile, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	}); err != nil {
		return err
	}
	for _, c := range s.Cases {
		if !slices.Contains(PlotFamilies, c.Family) {
			continue
		}
		if err := writeFile(dir, plotName(c.Name)+"."+format, func(w io.Writer) error {
			return WritePlot(w, format, c, results)
		}); err != nil {
			return err
		}
	}
	return nil
}

// plotName is the file name (without extension) of a case's plot.
func plotName(c string) string {
	return strings.NewReplacer("/", "-", "×", "x").Replace(c)
}

func writeReportHead(b *strings.Builder, command string, s Suite) {
	seed := s.Seed
	if seed == 0 {
		seed = DefaultSeed
	}
	c := DefaultConfig(1).withDefaults()
	fmt.Fprintf(b, `# Throttling quality: simulation results

Written by %s (package sim); do not edit by hand. The simulation is
deterministic: the same seed (%#x) and code give the same numbers and plots. The
seed sweep (%s) gives the median and worst case over other seeds.

## Setup

- **Transform model**: each group runs the transform's own firing, package
  internal/firing (the core the DoFn drives), on the simulator's clock, with its own
  policy: a queue; a timer that fires %s after an element arrives in an empty group (at
  once for the pacers, whose calls take one element, as the transform's paced mode); a
  firing takes up to %d eligible elements from the head of the queue (an element that
  waited longer than the maximum wait is routed as it is reached, and another taken in
  its place) and, for at most one batch interval, asks the policy about each: Send;
  Postpone (to a time within the interval: the firing waits for it, so sends are spread
  at the policy's pace; later: the firing ends and the timer is set to that time, at
  least %s after the postponement); Reject (final). At most the calls in flight of the
  case are busy at once, and a firing starts with up to %s of random delay. A 429 puts
  its element back at the head of the queue, eligible after the Retry-After if any; it
  ends server-throttled only when it would wait too long. The firing ends when its calls
  are answered or one batch interval after it started (calls still under way are carried
  by the next firing), and the next one comes %s after its timer (or at once if it ran
  longer). See the package documentation of sim for the exact loop. The batch size is
  high so that the loop does not limit throughput; the maximum wait is %s (the
  simulator's choice).
- **Per-element model** (the last family): the loop of the transform before
  postponement: a 429 is final (server-throttled), no maximum wait, no time bound on
  a firing, and any Postpone ends the firing; these are the scenarios and goals of
  the first comparison of SRE and pacing.
- **Backends**: capacity 100 requests/s, but %d requests/s for the strict limiters (as
  in the first real-time measurements). Fixed windows are aligned to the start of the run. A
  Retry-After, when sent, is the wait until a request would be accepted rounded up
  to whole seconds, at least 1 s (1 s during an outage), like the test server's. A
  queueing server (the slow APIs) never refuses: it serves one request per 1/capacity
  in arrival order, and a request waits for its turn before its latency, like the test
  server's queue mode.
- **Load**: Poisson arrivals at the offered rate, spread evenly over G groups; steady
  overload at 2× capacity in the matrix. A competitor, where there is one, is a
  Poisson client at 1× capacity sharing the backend that never throttles and never
  retries. A bounded input is all there at the start.
- **Metrics** leave out each run's warm-up. *Utilisation* is calls accepted divided by
  what a perfect client could have had accepted: min(offered, capacity − competitor
  accepted, G × calls in flight ÷ latency) integrated over each phase (arrivals are
  random and backends have bursts, so a little above 100 %% is possible). *Waste* is
  calls the backend rejected divided by calls sent (each retry of an element is a
  call). *Client-rejected* is, of the elements that arrived after the warm-up and
  were final by the end, the share rejected by the client (by the policy, or by the
  maximum wait or buffer). *Fairness* is Jain's index of the groups' accepted calls
  in overloaded seconds (1 = even; 1/G = one group takes all; – when not measured).
  *Delay* is the queueing delay of successes, arrival to the sending of the accepted
  call; under steady overload with postponement it nears the maximum wait, since the
  queue serves the oldest first. *Recovery* is the time after a change until
  utilisation is back at 90 %% (the end of the first second from which three seconds
  in a row reach 90 %% together). A bounded input is done when its last element is
  final; its ideal time is elements ÷ min(capacity, G × calls in flight ÷ latency);
  *done* gives the time and its ratio to the ideal. *Timed out* counts the calls that
  outlived the call timeout (their elements are errors), and *answer p99* is the 99th
  percentile of the backend's time to answer a call: a queueing server's wait plus the
  latency.
- **Goals** are the project's pacing targets (the SRE comparison's for the per-element model); a goal
  missed is stated with what the run got.
- **Algorithms** (all but the pacers and the oracle are per-element throttles: they
  send or reject, never postpone, and a rejected element is client-rejected; the
  per-element model runs only those and the oracle):
`, "`"+command+"`", seed, "`make simsweep`, [sweep.md](sweep.md)", spaced(c.BatchInterval), c.BatchSize, spaced(c.Tick),
		spaced(c.StartJitter), spaced(c.BatchInterval), spaced(MatrixMaxWait), StrictCapacity)
	for _, a := range s.Algorithms {
		fmt.Fprintf(b, "  - `%s`: %s.\n", a.Name, a.Description)
	}
	b.WriteString("\n")
}

// writeGlance writes, per algorithm and family, how many runs meet every
// goal.
func writeGlance(b *strings.Builder, s Suite, results []Result) {
	fs := families(s.Cases)
	b.WriteString("## Goals at a glance\n\nRuns (case × G) meeting every goal of their case.\n\n| algorithm |")
	for _, f := range fs {
		fmt.Fprintf(b, " %s |", f)
	}
	b.WriteString("\n|---|")
	for range fs {
		b.WriteString("--:|")
	}
	b.WriteString("\n")
	family := map[string]string{}
	for _, c := range s.Cases {
		family[c.Name] = c.Family
	}
	for _, a := range s.Algorithms {
		fmt.Fprintf(b, "| %s |", a.Name)
		for _, f := range fs {
			met, n := 0, 0
			for _, r := range results {
				if r.Algorithm == a.Name && family[r.Case] == f {
					n++
					if Met(r.Checks) {
						met++
					}
				}
			}
			if n == 0 {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %d / %d |", met, n)
		}
		b.WriteString("\n")
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
