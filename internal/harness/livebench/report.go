package livebench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Modes are the throttle modes every scenario runs in, in report order.
var Modes = []string{"paced", "sre"}

// merge returns old with each result of fresh replacing the one of the
// same scenario and mode, sorted in the order of scenarios and modes.
// Results of scenarios or modes that no longer exist are dropped.
func merge(old, fresh []Result) []Result {
	key := func(r Result) string { return r.Scenario + "/" + r.Mode }
	byKey := map[string]Result{}
	for _, r := range old {
		byKey[key(r)] = r
	}
	for _, r := range fresh {
		byKey[key(r)] = r
	}
	var out []Result
	for _, sc := range scenarios {
		for _, m := range Modes {
			if r, ok := byKey[sc.name+"/"+m]; ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// decodeResults reads results.json; empty input is no results.
func decodeResults(b []byte) ([]Result, error) {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, nil
	}
	var rs []Result
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("results.json: %w", err)
	}
	return rs, nil
}

// encodeResults writes results.json, one result a line.
func encodeResults(rs []Result) []byte {
	var b strings.Builder
	b.WriteString("[\n")
	for i, r := range rs {
		line, _ := json.Marshal(r)
		b.Write(line)
		if i < len(rs)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// mark is the measured text of metric m for r, followed by ✓ or ✗ if sc
// has a target on m.
func mark(sc scenario, r Result, m metric, text string) string {
	for _, t := range sc.targets {
		if t.metric == m {
			if sc.meets(r, t) {
				return text + " ✓"
			}
			return text + " ✗"
		}
	}
	return text
}

func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

func recoveryText(r Result) string {
	switch {
	case r.Recovery == nil:
		return "–"
	case *r.Recovery < 0:
		return "never"
	}
	return fmt.Sprintf("%d s", *r.Recovery)
}

func secondsText(s float64) string { return fmt.Sprintf("%.1f s", s) }

// ratioText writes a time ratio to three decimals: targets such as
// 1.073 × ideal have three, and two would round a ratio of 1.074 that
// misses one to 1.07.
func ratioText(v float64) string { return fmt.Sprintf("%.3f", v) }

// rateText is a rate in requests per second and its share of the quota,
// "19.2/s = 96.0 %", or "–" if the share is NaN (not measured).
func rateText(perSecond, share float64) string {
	if math.IsNaN(share) {
		return "–"
	}
	return fmt.Sprintf("%.1f/s = %s", perSecond, pct(share))
}

// timeText is a bounded run's wall time, saying whether it was stopped at
// its deadline.
func timeText(r Result) string {
	if r.Stopped {
		return secondsText(r.Elapsed) + ", stopped ✗"
	}
	return secondsText(r.Elapsed)
}

// waitText is a wait of tier t, in seconds ("0.42 s"), or "–" if none of
// its waits was measured.
func waitText(t TierResult, s float64) string {
	if t.Waits == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f s", s)
}

// verdicts says, for a line of output, each target of sc with r's value
// and ✓ or ✗.
func verdicts(sc scenario, r Result) string {
	var parts []string
	for _, t := range sc.targets {
		v := r.value(t.metric)
		var text string
		switch t.metric {
		case utilisation, waste, succeeded:
			text = pct(v)
		case recovery:
			text = recoveryText(r)
		case timeRatio:
			text = ratioText(v)
		case highSucceeded:
			text = pct(v)
		case highP99Ratio, delayP99Ratio:
			text = fmt.Sprintf("%.2f", v)
		case clientThrottled:
			text = fmt.Sprint(r.ClientThrottled)
		case steadyShare:
			text = rateText(r.SteadyRate, v)
		case runShare:
			text = rateText(r.RunRate, v)
		case runRate:
			text = rateText(r.RunRate, r.value(runShare))
		}
		ok := "✗"
		if sc.meets(r, t) {
			ok = "✓"
		}
		parts = append(parts, fmt.Sprintf("%s: %s %s", t, text, ok))
	}
	return strings.Join(parts, "; ")
}

// summaryLine is the line printed after each run.
func summaryLine(sc scenario, r Result) string {
	var counts string
	switch {
	case sc.priority():
		var ts []string
		for _, t := range r.Tiers {
			ts = append(ts, fmt.Sprintf("%s sent %d succeeded %d expired %d other %d wait median %s p99 %s",
				t.Tier, t.Sent, t.Succeeded, t.Expired, t.Other, waitText(t, t.MedianWait), waitText(t, t.P99Wait)))
		}
		counts = fmt.Sprintf("accepted %d rejected %d; %s", r.Accepted, r.Rejected, strings.Join(ts, "; "))
	case sc.bounded():
		counts = fmt.Sprintf("success %d client-throttled %d server-throttled %d errors %d calls %d time %s (ideal %s)",
			r.Success, r.ClientThrottled, r.ServerThrottled, r.ErrorElements, r.Accepted+r.Rejected+r.Errors,
			secondsText(r.Elapsed), secondsText(r.Ideal))
		if sc.isCrossed() {
			counts += fmt.Sprintf(" span %s", secondsText(r.Span))
			if r.Stopped {
				counts += ", stopped at the deadline"
			}
		}
	default:
		counts = fmt.Sprintf("accepted %d rejected %d client-throttled %d", r.Accepted, r.Rejected, r.ClientThrottled)
		if sc.competitor {
			counts += fmt.Sprintf(" competitor accepted %d rejected %d", r.CompetitorAccepted, r.CompetitorRejected)
		}
	}
	return fmt.Sprintf("%-22s %-5s %s | %s", sc.name, r.Mode, counts, verdicts(sc, r))
}

// writeReport writes results.md for the results (from merge) of runs made
// with the given -duration.
func writeReport(w io.Writer, d time.Duration, results []Result) {
	fmt.Fprintf(w, "# Throttling quality: real-time runs\n\n")
	fmt.Fprintf(w, "Written by `make livebench` (`go run ./cmd/livebench -duration %v -out docs/live`, part of `make bench`);\n", d)
	fmt.Fprint(w, `do not edit by hand. `+"`make livebench LIVE_SCENARIOS=gcra-600`"+` (`+"`-scenarios`"+`, comma-separated) runs some
scenarios only and rewrites this page, keeping the other rows from results.json.

Each run is the pipeline on Prism with the HTTP caller against the quota test server on loopback, in real
time: once in the paced mode (`+"`--throttle_mode=paced`"+`: the adaptive pacer, which postpones rather than
rejects) and once in SRE mode (`+"`--throttle_mode=sre`"+`, the original tool's rule) for comparison (the
slow-API, crossed and priority families in the paced mode only). The
server's own /stats series give the calls: *accepted* and *rejected* (429) are the pipeline's calls as the
server answered them, *waste* is rejected ÷ (accepted + rejected), and *client-throttled* counts the elements
the pipeline did not send. The targets are the project's pacing targets; a measured value that has a target is marked ✓ (met)
or ✗ (missed). The runs share a 2-core machine with other work, so one run differs from the next by a few
per cent and the numbers are indicative.
`)
	for _, f := range families {
		var rows []Result
		var scs []scenario
		for _, sc := range scenarios {
			if sc.family != f.name {
				continue
			}
			scs = append(scs, sc)
			for _, r := range results {
				if r.Scenario == sc.name {
					rows = append(rows, r)
				}
			}
		}
		fmt.Fprintf(w, "\n## %s\n\n%s\n\n", f.title, f.setup)
		if len(rows) == 0 {
			fmt.Fprintf(w, "Not run yet.\n")
		} else {
			fmt.Fprintf(w, "%s\n\n", measuredLine(rows))
			writeTable(w, f, rows)
		}
		fmt.Fprintln(w)
		for _, sc := range scs {
			var ts []string
			for _, t := range sc.targets {
				ts = append(ts, t.String())
			}
			fmt.Fprintf(w, "- **%s**: %s. Target: %s.\n", sc.name, sc.about, strings.Join(ts, ", "))
		}
	}
}

// measuredLine says when the rows were measured and, for streaming runs,
// for how long.
func measuredLine(rows []Result) string {
	first, last := rows[0].Measured, rows[0].Measured
	var durations []string
	for _, r := range rows {
		if r.Measured.Before(first) {
			first = r.Measured
		}
		if r.Measured.After(last) {
			last = r.Measured
		}
		if r.Duration != "" && !slices.Contains(durations, r.Duration) {
			durations = append(durations, r.Duration)
		}
	}
	s := "Measured " + first.Format("2006-01-02 15:04")
	switch {
	case last.Format("2006-01-02") != first.Format("2006-01-02"):
		s += " to " + last.Format("2006-01-02 15:04")
	case last.Format("15:04") != first.Format("15:04"):
		s += "–" + last.Format("15:04")
	}
	s += " UTC"
	if len(durations) > 0 {
		s += "; the source ran " + strings.Join(durations, " or ")
	}
	return s + "."
}

// writeTable writes one family's table.
func writeTable(w io.Writer, f family, rows []Result) {
	scOf := func(r Result) scenario { return scenarios[indexOf(r.Scenario)] }
	switch {
	case f.name == crossedFamily:
		fmt.Fprint(w, "| scenario | mode | elements | success | client-throttled | server-throttled | errors | calls | waste | time | from 10th s | over the run | p99 answer |\n")
		fmt.Fprint(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, r := range rows {
			sc := scOf(r)
			p99 := "–"
			if r.DelayP99 > 0 {
				p99 = secondsText(r.DelayP99)
			}
			over := mark(sc, r, runRate, mark(sc, r, runShare, rateText(r.RunRate, r.value(runShare))))
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %d | %d | %d | %s | %s | %s | %s | %s |\n",
				r.Scenario, r.Mode, r.Elements, mark(sc, r, succeeded, fmt.Sprint(r.Success)),
				mark(sc, r, clientThrottled, fmt.Sprint(r.ClientThrottled)), r.ServerThrottled, r.ErrorElements,
				r.Accepted+r.Rejected+r.Errors, mark(sc, r, waste, pct(r.Waste)), timeText(r),
				mark(sc, r, steadyShare, rateText(r.SteadyRate, r.value(steadyShare))), over, p99)
		}
	case f.bounded:
		fmt.Fprint(w, "| scenario | mode | elements | success | client-throttled | server-throttled | errors | calls | waste | time | ideal | time ÷ ideal | p99 answer |\n")
		fmt.Fprint(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, r := range rows {
			sc := scOf(r)
			p99 := "–"
			if r.DelayP99 > 0 {
				p99 = mark(sc, r, delayP99Ratio, secondsText(r.DelayP99))
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %d | %d | %d | %d | %s | %s | %s | %s | %s |\n",
				r.Scenario, r.Mode, r.Elements, mark(sc, r, succeeded, fmt.Sprint(r.Success)),
				r.ClientThrottled, r.ServerThrottled, r.ErrorElements, r.Accepted+r.Rejected+r.Errors,
				mark(sc, r, waste, pct(r.Waste)), secondsText(r.Elapsed), secondsText(r.Ideal),
				mark(sc, r, timeRatio, ratioText(r.value(timeRatio))), p99)
		}
	case f.name == "priority":
		fmt.Fprint(w, "| scenario | mode | tier | sent | succeeded | expired | other | median wait | p99 wait | waste |\n")
		fmt.Fprint(w, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, r := range rows {
			sc := scOf(r)
			for i, t := range r.Tiers {
				succ, p99, wasteText := fmt.Sprint(t.Succeeded), waitText(t, t.P99Wait), ""
				if t.Tier == tierHigh {
					succ, p99 = mark(sc, r, highSucceeded, succ), mark(sc, r, highP99Ratio, p99)
				}
				if i == 0 {
					wasteText = mark(sc, r, waste, pct(r.Waste))
				}
				fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %d | %d | %s | %s | %s |\n",
					r.Scenario, r.Mode, t.Tier, t.Sent, succ, t.Expired, t.Other, waitText(t, t.MedianWait), p99, wasteText)
			}
		}
	case f.name == "competitor":
		fmt.Fprint(w, "| scenario | mode | competitor rate | competitor accepted | competitor rejected | accepted | rejected | client-throttled | capacity left | utilisation of it | waste |\n")
		fmt.Fprint(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, r := range rows {
			sc := scOf(r)
			fmt.Fprintf(w, "| %s | %s | %g× quota | %d | %d | %d | %d | %d | %.0f | %s | %s |\n",
				r.Scenario, r.Mode, r.Competitor, r.CompetitorAccepted, r.CompetitorRejected,
				r.Accepted, r.Rejected, r.ClientThrottled, r.Capacity,
				mark(sc, r, utilisation, pct(r.Utilisation)), mark(sc, r, waste, pct(r.Waste)))
		}
	default:
		fmt.Fprint(w, "| scenario | mode | accepted | rejected | client-throttled | utilisation | waste | recovery |\n")
		fmt.Fprint(w, "|---|---|--:|--:|--:|--:|--:|--:|\n")
		for _, r := range rows {
			sc := scOf(r)
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %s | %s | %s |\n",
				r.Scenario, r.Mode, r.Accepted, r.Rejected, r.ClientThrottled,
				mark(sc, r, utilisation, pct(r.Utilisation)), mark(sc, r, waste, pct(r.Waste)),
				mark(sc, r, recovery, recoveryText(r)))
		}
	}
}
