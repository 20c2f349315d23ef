package quotabench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Targets for the shared quota.
const (
	// MaxWaste is the most of the pipelines' calls the server may reject.
	MaxWaste = 0.01
	// MaxFinishSpread is the target of the finish spread (see
	// Result.FinishSpread) where a scenario sets one: processes with equal
	// demand on one quota progress together.
	MaxFinishSpread = 0.10
	// MinUtilisation is the least of the capacity left to the pipelines
	// they must use while all of them are calling.
	MinUtilisation = 0.97
)

// Verdict is a measured value against its target.
type Verdict struct {
	OK   bool
	Text string // the value and the target, e.g. "0.42 % (≤ 1 %)"
}

func (v Verdict) String() string {
	mark := "✗"
	if v.OK {
		mark = "✓"
	}
	return mark + " " + v.Text
}

// WasteVerdict checks r's waste against its scenario's WasteTarget, or
// MaxWaste.
func (r Result) WasteVerdict() Verdict {
	w, most := r.Measure.Waste, r.Scenario.maxWaste()
	return Verdict{OK: r.Measure.Accepted+r.Measure.Rejected > 0 && w <= most, Text: fmt.Sprintf("%s (≤ %s)", pct(w), pct(most))}
}

// SuccessVerdict checks that every element of every process succeeded,
// within the deadline.
func (r Result) SuccessVerdict() Verdict {
	var success int64
	for _, p := range r.Procs {
		success += p.Summary.Success
	}
	want := int64(r.Elements * len(r.Procs))
	return Verdict{OK: want > 0 && success == want && !r.TimedOut, Text: fmt.Sprintf("%d of %d", success, want)}
}

// RateVerdict checks a strict scenario's share of the quota's rate
// (RateShare) against its MinRate, within the deadline.
func (r Result) RateVerdict() Verdict {
	s := r.RateShare()
	return Verdict{OK: !r.TimedOut && s > 0 && s >= r.Scenario.MinRate, Text: fmt.Sprintf("%s (≥ %s)", pct(s), pct(r.Scenario.MinRate))}
}

// UtilisationVerdict checks r's utilisation against MinUtilisation.
func (r Result) UtilisationVerdict() Verdict {
	u := r.Measure.Utilisation
	return Verdict{OK: r.Measure.BusySeconds > 0 && u >= MinUtilisation, Text: fmt.Sprintf("%s (≥ %s)", pct(u), pct(MinUtilisation))}
}

// TimeVerdict checks a strict scenario's time ratio against its MaxTime,
// within the deadline.
func (r Result) TimeVerdict() Verdict {
	t := r.TimeRatio()
	return Verdict{OK: !r.TimedOut && t > 0 && t <= r.Scenario.MaxTime, Text: fmt.Sprintf("%s (≤ %g×)", times(t), r.Scenario.MaxTime)}
}

// ConservationVerdict checks that every process accounted for each of its
// elements exactly once.
func (r Result) ConservationVerdict() Verdict {
	want := r.Elements * len(r.Procs)
	got := 0
	for _, p := range r.Procs {
		got += p.Outputs.Lines
	}
	return Verdict{OK: r.Conserved(), Text: fmt.Sprintf("%d lines for %d elements", got, want)}
}

// day formats the time of a run for the report.
func day(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 MST") }

// aRun is a run of the benchmark and the scenarios of a report it measured.
type aRun struct {
	command string
	when    time.Time
	names   []string
}

// runsOf lists the runs that measured results, the latest first: each
// result's own Command and When, else h's.
func runsOf(h Header, results []Result) []aRun {
	var rs []aRun
	for _, r := range results {
		c, w := r.Command, r.When
		if c == "" {
			c, w = h.Command, h.When
		}
		i := slices.IndexFunc(rs, func(x aRun) bool { return x.command == c && x.when.Equal(w) })
		if i < 0 {
			rs = append(rs, aRun{command: c, when: w})
			i = len(rs) - 1
		}
		if !slices.Contains(rs[i].names, r.Scenario.Name) { // once for all its runs
			rs[i].names = append(rs[i].names, r.Scenario.Name)
		}
	}
	slices.SortStableFunc(rs, func(a, b aRun) int { return b.when.Compare(a.when) })
	return rs
}

// times formats a time ratio, "–" for none.
func times(t float64) string {
	if t == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f×", t)
}

// pct formats a fraction as a percentage.
func pct(f float64) string {
	s := fmt.Sprintf("%.2f", 100*f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + " %"
}

// Header describes a run of the benchmark for the report.
type Header struct {
	// Command makes the report.
	Command string
	// Machine describes the computer, e.g. "2 shared cores, linux/amd64".
	Machine string
	// When the run started.
	When     time.Time
	Settings Settings
	// Plot is the plot's file name, relative to the report; "" for none.
	Plot string
	// StrictPlot is the strict scenarios' plot's file name, as Plot.
	StrictPlot string
}

// WriteReport writes the Markdown report of results to w.
func WriteReport(w io.Writer, h Header, results []Result) error {
	set := h.Settings.withDefaults()
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var main, faults, strict, adv, crossed, prio []Result
	for _, r := range results {
		switch {
		case r.Scenario.Priority:
			prio = append(prio, r)
		case r.Scenario.Crossed:
			crossed = append(crossed, r)
		case r.Scenario.Window:
			adv = append(adv, r)
		case r.Scenario.Strict:
			strict = append(strict, r)
		case r.Scenario.faulty():
			faults = append(faults, r)
		default:
			main = append(main, r)
		}
	}
	bucket := len(main)+len(faults) > 0
	p("# A shared quota, measured\n\n")
	if !bucket {
		p("Pipeline processes (`cmd/beamthrottle`, each an OS process on its own Prism) against a strict limiter " +
			"(below), each naming itself with `X-Quota-Client` so that the server counts each one. ")
	} else {
		p("%d pipeline processes (`cmd/beamthrottle`, each an OS process on its own Prism) "+
			"share one quota on the quota test server, whose capacity equals the quota: %d calls a second "+
			"(token bucket, one second of burst). Each process offers %g/s (%g × the capacity in all) for %v "+
			"(%v in the fault scenarios), with `--max_wait=%v`, and names itself with `X-Quota-Client` so that "+
			"the server counts each one. ",
			set.Processes, set.Capacity, set.rate(), set.Offer*float64(set.Processes), set.Duration, set.FaultDuration, set.MaxWait)
	}
	if rs := runsOf(h, results); len(rs) <= 1 {
		p("Made by:\n\n    %s\n\n", h.Command)
		p("Measured %s on %s. One run, indicative: the numbers move with the machine's load.\n\n", day(h.When), h.Machine)
	} else {
		p("Made by several runs, the latest first; a run of some scenarios (`-scenarios`, `make quotabench " +
			"QUOTA_SCENARIOS=a,b`) replaces their rows and keeps the others from results.json:\n\n")
		for _, r := range rs {
			p("- %s: `%s` (%s)\n", day(r.when), r.command, strings.Join(r.names, ", "))
		}
		p("\nMeasured on %s. Each row is one run, indicative: the numbers move with the machine's load.\n\n", h.Machine)
	}
	p("- **Waste**: the pipelines' calls the server rejected ÷ all their calls, over the whole run. Target ≤ %s.\n", pct(MaxWaste))
	if bucket {
		p("- **Utilisation**: the pipelines' accepted calls ÷ the capacity left to them (capacity × seconds, less what the "+
			"competitor got), over the whole seconds in which every process was calling. Target ≥ %s.\n", pct(MinUtilisation))
	}
	p("- **Conservation**: each process's summary says all its generated elements were accounted for, its outcomes add " +
		"up to the elements generated, and its output files hold exactly that many lines, as many per output as the " +
		"summary counts, each line a distinct payload (the generator's payloads are unique). A process that reads a " +
		"subscription does not know how many elements came: there the harness's count of what it published, each " +
		"payload unique too, stands for the summary's.\n\n")
	if h.Plot != "" && bucket {
		p("![accepted and rejected per second, per scenario](%s)\n\n", h.Plot)
	}

	if len(main) > 0 {
		p("## Side by side\n\n")
		p("| scenario | quota | accepted | rejected | waste | utilisation | competitor accepted | conservation |\n")
		p("|---|---|--:|--:|---|---|--:|---|\n")
		for _, r := range main {
			m := r.Measure
			comp := "–"
			if r.Scenario.Competitor > 0 {
				comp = fmt.Sprintf("%d (%g/s offered)", m.CompetitorAccepted, r.Scenario.Competitor*float64(set.Capacity))
			}
			p("| %s: %s | %s | %d | %d | %s | %s over %d s | %s | %s |\n", r.Scenario.Name, r.Scenario.Title,
				quotaOf(r.Scenario), m.Accepted, m.Rejected, r.WasteVerdict(), r.UtilisationVerdict(), m.BusySeconds,
				comp, mark(r.ConservationVerdict().OK))
		}
		p("\n")
	}
	if len(faults) > 0 {
		p("## Faults\n\n")
		p("Redis or the rate-limit service is killed %v after every process is calling and restarted %v later; "+
			"the slow service answers every chunk %v late for the whole run (a delaying TCP proxy in the harness). "+
			"Calls per second are the pipelines' accepted/rejected before, during and after the outage. "+
			"\"Quota warnings\" counts the processes' log lines saying the quota's service did not answer "+
			"(one a minute at most per process).\n\n", set.FaultAt, set.FaultFor, set.SlowDelay)
		p("| scenario | conservation | accepted | rejected | waste | utilisation | before /s | during /s | after /s | quota warnings |\n")
		p("|---|---|--:|--:|---|---|---|---|---|--:|\n")
		for _, r := range faults {
			m := r.Measure
			ph := func(x Phase) string {
				if x.Seconds == 0 {
					return "–"
				}
				return fmt.Sprintf("%.1f / %.1f", x.AcceptedRate(), x.RejectedRate())
			}
			before, during, after := ph(r.Before), ph(r.During), ph(r.After)
			if r.Scenario.Fault == RateLimitSlow {
				before, after = "–", "–"
				busy := Phase{Seconds: m.BusySeconds, Accepted: m.BusyAccepted, Rejected: m.BusyRejected}
				during = ph(busy) + fmt.Sprintf(" (whole run; %d chunks delayed)", r.ProxyChunks)
			}
			p("| %s: %s | %s | %d | %d | %s | %s | %s | %s | %s | %d |\n", r.Scenario.Name, r.Scenario.Title,
				r.ConservationVerdict(), m.Accepted, m.Rejected, pct(m.Waste), pct(m.Utilisation),
				before, during, after, r.QuotaWarnings)
		}
		p("\n")
	}
	if len(strict) > 0 {
		writeStrict(&b, h, strict)
	}
	if len(adv) > 0 {
		writeAdvertised(&b, set, adv)
	}
	if len(crossed) > 0 {
		writeCrossed(&b, set, crossed)
	}
	if len(prio) > 0 {
		writePriority(&b, h, prio, len(strict) > 0)
	}
	if bucket {
		writeReading(&b)
	}
	p("## Processes\n\n")
	p("Each process's summary (success / client_throttled / server_throttled / errors = total) and its output files.\n\n")
	p("| scenario | process | summary | output lines (success / client_throttled / server_throttled / errors) | conserved |\n")
	p("|---|---|---|---|---|\n")
	for _, r := range results {
		for _, pr := range r.Procs {
			s := pr.Summary
			sum := "none printed"
			if pr.SummaryOK {
				sum = fmt.Sprintf("%d / %d / %d / %d = %d", s.Success, s.ClientThrottled, s.ServerThrottled, s.Errors, s.Total)
			}
			o := pr.Outputs.ByOutcome
			p("| %s | %s | %s | %d (%d / %d / %d / %d) | %s |\n", r.label(), pr.Name, sum, pr.Outputs.Lines,
				o["success"], o["client_throttled"], o["server_throttled"], o["errors"], mark(pr.Conserved))
		}
	}
	p("\n")
	var problems []string
	for _, r := range results {
		if r.Problem != "" {
			problems = append(problems, fmt.Sprintf("- %s: %s", r.label(), oneLine(r.Problem)))
		}
	}
	if len(problems) > 0 {
		p("## Problems\n\n%s\n", strings.Join(problems, "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeStrict writes the section of the strict scenarios' results to b.
func writeStrict(b *strings.Builder, h Header, results []Result) {
	set := h.Settings.withDefaults()
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Against a strict limiter\n\n")
	p("Here the quota server is a strict limiter: a GCRA at %d calls a second with no burst, which refuses any call "+
		"that comes less than %v after the last one it accepted. The processes generate %d elements in all, split evenly "+
		"between them, at once and bounded (`--generate=N` without `--generate_rate`), as a batch job does, with "+
		"`--max_wait=auto`. A quota is set to a share of the API's rate: `redis` reserves evenly spaced slots in Redis "+
		"(`--quota_rate`, no `--quota_burst`), all processes on one `--quota_key`; `local` gives each process slots "+
		"from a GCRA of its own at its part of the share; `envoy` counts %d a second in fixed windows (the "+
		"descriptor bench=strict in testdata/ratelimit/config/beamthrottle.yaml). "+
		"The `nginx-` rows are against Debian's nginx instead (`limit_req` at %d r/s, no burst, `limit_req_status 429`, "+
		"two workers: a limiter written by others, counting in milliseconds of a clock it caches), with their own "+
		"element counts, each run five times in a row; waste is counted from nginx's access log. "+
		"`go run ./cmd/quotabench -scenarios strict -out DIR` runs them alone, `-scenarios nginx` those against nginx, "+
		"and a list of names such as `-scenarios strict-redis,strict-local-one` some of them.\n\n",
		set.APIRate, time.Second/time.Duration(set.APIRate), set.StrictElements, envoyStrictRate, set.APIRate)
	p("- **Calls** and **429**: the pipelines' calls as the server counted them, and those it refused; **waste** is 429 ÷ calls.\n")
	p("- **Time ratio**: the time from the first call the server saw from the pipelines to the last one it accepted " +
		"(its own timestamps), ÷ the elements ÷ the quota's rate; without a quota, ÷ the elements ÷ the API's rate. " +
		"1 is the quota's pace, which below 100 %% is slower than the API's.\n")
	p("- **Finish spread**: the time between the first and the last process's last accepted call ÷ the run's time: " +
		"processes with equal demand on one quota should finish together (a quota that serves one process at a time " +
		"spreads three over about two thirds of the run).\n")
	p("- Targets: %s.\n\n", strictTargets(results))
	if h.StrictPlot != "" {
		p("![accepted and rejected per second, strict limiter](%s)\n\n", h.StrictPlot)
	}
	writeStrictRows(b, set, results)
}

// writeStrictRows writes the table of strict scenarios' results to b.
func writeStrictRows(b *strings.Builder, set Settings, results []Result) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("| scenario | quota | elements | success | calls | 429 | waste | time ratio | finish spread | verdicts | conservation |\n")
	p("|---|---|--:|--:|--:|--:|---|---|---|---|---|\n")
	for _, r := range results {
		m := r.Measure
		var success int64
		for _, pr := range r.Procs {
			success += pr.Summary.Success
		}
		ratio := times(r.TimeRatio())
		if r.TimeRatio() > 0 {
			ratio += fmt.Sprintf(" (%.1f s ÷ %.1f s)", r.Span().Seconds(), r.IdealTime().Seconds())
		}
		verdicts := r.verdicts()
		spread := "–" // one process, or a run measured before spreads were
		if finished := r.finished(); finished > 1 {
			spread = pct(r.FinishSpread())
		}
		name := r.label()
		p("| %s: %s | %s | %d | %d | %d | %d | %s | %s | %s | %s | %s |\n", name, r.Scenario.Title,
			strictQuota(r, set.APIRate), r.Elements*len(r.Procs), success, m.Accepted+m.Rejected, m.Rejected,
			pct(m.Waste), ratio, spread, verdicts, r.ConservationVerdict())
	}
	p("\n")
}

// verdicts lists the verdicts of a strict scenario's targets, "report
// only" if it has none.
func (r Result) verdicts() string {
	sc := r.Scenario
	var vs []string
	if sc.AllSucceed {
		vs = append(vs, "success "+r.SuccessVerdict().String())
	}
	if sc.MaxTime > 0 || sc.MinRate > 0 {
		vs = append(vs, "waste "+r.WasteVerdict().String())
	}
	if sc.MaxTime > 0 {
		vs = append(vs, "time "+r.TimeVerdict().String())
	}
	if sc.MinRate > 0 {
		vs = append(vs, "rate "+r.RateVerdict().String())
	}
	if sc.MaxSpread > 0 {
		vs = append(vs, "spread "+r.SpreadVerdict().String())
	}
	if r.TimedOut {
		vs = append(vs, "✗ stopped at the deadline")
	}
	if len(vs) == 0 {
		return "report only"
	}
	return strings.Join(vs, ", ")
}

// label names r's scenario, and its run when it ran more than once.
func (r Result) label() string {
	if r.Run > 0 {
		return fmt.Sprintf("%s (run %d)", r.Scenario.Name, r.Run)
	}
	return r.Scenario.Name
}

// strictTargets lists the targets of the strict scenarios among results.
func strictTargets(results []Result) string {
	var ts []string
	seen := map[string]bool{}
	for _, r := range results {
		if r.Scenario.MaxTime > 0 && !seen[r.Scenario.Name] {
			seen[r.Scenario.Name] = true
			t := fmt.Sprintf("%s, waste ≤ %s and time ratio ≤ %g×", r.Scenario.Name, pct(MaxWaste), r.Scenario.MaxTime)
			if r.Scenario.MaxSpread > 0 {
				t += fmt.Sprintf(", finish spread ≤ %s", pct(r.Scenario.MaxSpread))
			}
			if r.Scenario.Runs > 1 {
				t += fmt.Sprintf(", in each of %d runs", r.Scenario.Runs)
			}
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return "none among these rows; the others are reported only"
	}
	return strings.Join(ts, "; ") + "; the others are reported only"
}

// strictQuota describes the quota of a strict scenario's run against an
// API of apiRate calls a second.
func strictQuota(r Result, apiRate int) string {
	share := pct(ratio(r.QuotaRate, float64(apiRate)))
	if r.Scenario.Window {
		return fmt.Sprintf("none (window %d/min)", WindowQuota)
	}
	switch r.Scenario.Backend {
	case "none":
		return fmt.Sprintf("none (API %d/s)", apiRate)
	case "redis":
		return fmt.Sprintf("redis slots, %g/s (%s)", r.QuotaRate, share)
	case "local":
		if n := len(r.Procs); n > 1 {
			return fmt.Sprintf("local slots, %g/s each (%g/s, %s)", r.QuotaRate/float64(n), r.QuotaRate, share)
		}
		return fmt.Sprintf("local slots, %g/s (%s)", r.QuotaRate, share)
	case "envoy":
		return fmt.Sprintf("envoy, %g/s in 1 s windows (%s)", r.QuotaRate, share)
	}
	return r.Scenario.Backend
}

// writeReading writes the notes on the token-bucket scenarios to b.
func writeReading(b *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Reading the numbers\n\n")
	p("- Utilisation can pass 100 %%: the server's token bucket holds one second of burst, so a window of n seconds " +
		"can accept up to capacity × (n + 1).\n")
	p("- With a competitor, the configured quota (the capacity) is above what is left: the shared quota lets the " +
		"processes try for more than they can get, and the adaptive throttle on top finds the rest from the 429s, " +
		"which costs rejections. The 1 %% waste target is the shared quota's alone; it is shown here for comparison.\n")
	p("- Envoy's service counts in fixed windows aligned on the clock (here a second), answers each descriptor all " +
		"or nothing, and counts refused hits too. A firing therefore asks for its batch in chunks, one copy of the " +
		"descriptor each, in one request, and is granted the chunks that fit (see envoyquota.Quota); it asks for no " +
		"more than it can send before the window ends, and what it has left then lapses. A process refused waits " +
		"for the next window, which starts on the service's second.\n")
	p("- Fail open: while the service is down each process sends limited by its adaptive throttle alone. Fail closed: " +
		"no permit, no call; elements wait in their groups and those older than `--max_wait` go to client_throttled. " +
		"The outage's seconds are whole seconds, so \"during\" includes the seconds of the kill and of the restart.\n\n")
}

// quotaOf describes the shared quota of a scenario.
func quotaOf(sc Scenario) string {
	if sc.Backend == "none" {
		return "none"
	}
	return sc.Backend + ", fail " + sc.fail()
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// oneLine squeezes s onto one line for a Markdown list.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
