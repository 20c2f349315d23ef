package quotabench

import (
	"fmt"
	"strings"
	"time"
)

// writePriority writes the section of the priority scenarios' results to
// b; afterStrict says that the strict limiter was described above it.
func writePriority(b *strings.Builder, h Header, results []Result, afterStrict bool) {
	set := h.Settings.withDefaults()
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	quota := results[0].QuotaRate
	p("## Priority shares across processes\n\n")
	limiter := "the strict limiter above"
	if !afterStrict {
		limiter = fmt.Sprintf("a strict limiter: a GCRA at %d calls a second with no burst, which refuses any call "+
			"that comes less than %v after the last one it accepted", set.APIRate, time.Second/time.Duration(set.APIRate))
	}
	p("Two pipeline processes share one Redis quota of time slots (`--quota_backend=redis`, no `--quota_burst`) "+
		"at %g calls a second (%s of the API's rate) on one `--quota_key`, against %s. Each reads a Pub/Sub "+
		"subscription of its own (an emulator in the harness) with `--priority=json:%s`: every element of the "+
		"process `high` is `{\"seq\":N,\"tier\":\"high\"}`, every element of `low` has `\"tier\":\"low\"`. "+
		"Once both processes have called the server with a warm-up element each, the harness publishes to both at "+
		"the quota's rate, %g elements a second each, for %v: each offers the whole quota, twice the quota in all. "+
		"With `--max_wait=%v`, an element not called within %v goes to client_throttled. With "+
		"`--quota_high_share=s` (both processes pass the same), while the high tier sends, the normal and low "+
		"tiers of every job on the key together reserve at most 1 − s of the rate; without it, the slots go "+
		"to whichever process reserves first. The row `priority-high-alone` runs the high process alone, "+
		"for what one process makes of the slots. `go run ./cmd/quotabench -scenarios priority -out DIR` runs "+
		"these rows alone.\n\n",
		quota, pct(ratio(quota, float64(set.APIRate))), limiter, tierField, quota, set.Duration, set.MaxWait, set.MaxWait)
	p("- **Steady**: a process's calls the server accepted per second (by its `X-Quota-Client` name) over the "+
		"steady window, the whole seconds from %v after the first timed elements were published to the second of "+
		"the last, and that ÷ the %g elements a second its source offered: the part of its demand it got. **Quota "+
		"used** is the processes' steady calls per second together ÷ the quota's rate.\n", steadyAfter, quota)
	p("- **Whole run**: accepted ÷ offered, where offered is every element published to the process, the warm-up " +
		"included. It counts the start too, and the end: after the source stops, a process's backlog (up to " +
		"`--max_wait` of elements) is still called, so that a short run flatters it.\n")
	p("- **429**: each process's calls the server refused; **waste** is all 429 ÷ all calls.\n")
	p("- Target, with shares and both processes: the high process has at least %s of its demand accepted, "+
		"steady. A share s holds the low process to 1 − s of the rate, and the high one offers the whole rate, "+
		"so it can have s of its demand at most: at 0.9 the target is that bound itself, and any slot the quota "+
		"loses falls below it. Nor can it fill more of the quota beside the low process than on its own, which "+
		"`priority-high-alone` measures: a process that offers exactly the quota's rate. Without shares, about "+
		"half each is expected; reported only.\n\n", pct(MinHighShare))
	p("| scenario | `--quota_high_share` | high, steady | low, steady | quota used, steady | high, whole run | low, whole run | 429: high / low | waste | target | conservation |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		share := "none"
		if r.Scenario.HighShare > 0 {
			share = fmt.Sprintf("%g", r.Scenario.HighShare)
		}
		var used float64
		for _, t := range r.Tiers {
			used += r.SteadyRate(t)
		}
		steady, whole, rejected := func(t string) string {
			s, ok := r.tier(t)
			if !ok || r.SteadySeconds() == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f/s = %s", r.SteadyRate(s), pct(r.SteadyShare(s)))
		}, func(t string) string {
			s, ok := r.tier(t)
			if !ok {
				return "–"
			}
			return fmt.Sprintf("%d ÷ %d = %s", s.Accepted, s.Offered, pct(s.Share()))
		}, func(t string) string {
			s, ok := r.tier(t)
			if !ok {
				return "–"
			}
			return fmt.Sprint(s.Rejected)
		}
		usedText := "–"
		if r.SteadySeconds() > 0 {
			usedText = fmt.Sprintf("%s over %d s", pct(ratio(used, r.QuotaRate)), r.SteadySeconds())
		}
		target := "report only"
		if r.Scenario.MinHigh > 0 {
			target = r.HighVerdict().String()
		}
		p("| %s: %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |\n", r.Scenario.Name, r.Scenario.Title, share,
			steady("high"), steady("low"), usedText, whole("high"), whole("low"), rejected("high"), rejected("low"),
			pct(r.Measure.Waste), target, r.ConservationVerdict())
	}
	p("\n")
	var met, missed []string
	for _, r := range results {
		if r.Scenario.MinHigh == 0 {
			continue
		}
		hi, _ := r.tier("high")
		s := fmt.Sprintf("%s (%s)", r.Scenario.Name, pct(r.SteadyShare(hi)))
		if r.HighVerdict().OK {
			met = append(met, s)
		} else {
			missed = append(missed, s)
		}
	}
	if len(met)+len(missed) > 0 {
		p("Target (the high process has ≥ %s of its demand accepted, steady, beside the low one): met by %s; missed by %s.\n\n",
			pct(MinHighShare), orNone(met), orNone(missed))
	}
}

// orNone joins names, or says none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
