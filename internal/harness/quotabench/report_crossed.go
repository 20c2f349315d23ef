package quotabench

import (
	"fmt"
	"strings"
)

// writeCrossed writes the section of the crossed family's scenarios
// (Scenario.Crossed) to b.
func writeCrossed(b *strings.Builder, set Settings, results []Result) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Crossed: latency, limiter and headers, several processes\n\n")
	p("The crossed family puts together what the other families keep apart, as users meet it: an API that answers in "+
		"seconds and advertises its quota, as the hosted LLM APIs do, and a bare one. The quota server is the fixed window "+
		"of the advertised family, %d calls a minute, windows from its start, refusing at once (`--refuse-at-once`). "+
		"`x-8p-fixed600m-2s-ietf` answers each accepted call 2 s late and advertises the window in IETF draft-8 headers "+
		"(`RateLimit-Policy`, `RateLimit`) on every answer, with Retry-After on its 429s; `x-8p-fixed600m-0s-none` "+
		"answers at once, advertises nothing and sends no Retry-After. Eight processes of 150 elements each, one quota "+
		"(the server's: no shared quota, `--quota_backend=none`), default flags, the elements at once and bounded, "+
		"each process naming itself with `X-Quota-Client`. Columns as in the strict table. *Waste* is the server's 429s "+
		"÷ its requests, from its own counts. The *time ratio* is the time from the first call the server saw to the "+
		"last it accepted ÷ the elements ÷ the window's average rate (%g/s); the *rate* is the accepted calls ÷ that "+
		"time ÷ that rate (for a run whose every element succeeds, 1 ÷ the time ratio). A fixed window lets its whole "+
		"quota through at its start, so the 1,200 elements can pass in two windows, about 60 s: a time ratio near 0.5 "+
		"is the best. A run is killed %v after it starts, which fails its row (the ideal is 120 s; a run still going then "+
		"is at half the quota's rate at most). `go run ./cmd/quotabench -scenarios crossed -out DIR` (`make quotabench "+
		"QUOTA_SCENARIOS=crossed`) runs them alone. Targets: %s.\n\n",
		WindowQuota, WindowQuota/60.0, crossedDeadline, crossedTargets(results))
	writeStrictRows(b, set, results)
}

// crossedTargets says the targets of the crossed scenarios among results.
func crossedTargets(results []Result) string {
	var ts []string
	seen := map[string]bool{}
	for _, r := range results {
		sc := r.Scenario
		if seen[sc.Name] {
			continue
		}
		seen[sc.Name] = true
		var t []string
		if sc.AllSucceed {
			t = append(t, "every element succeeds")
		}
		if sc.MaxTime > 0 || sc.MinRate > 0 {
			t = append(t, fmt.Sprintf("waste ≤ %s", pct(sc.maxWaste())))
		}
		if sc.MaxTime > 0 {
			t = append(t, fmt.Sprintf("time ratio ≤ %g×", sc.MaxTime))
		}
		if sc.MinRate > 0 {
			t = append(t, fmt.Sprintf("rate ≥ %s of the quota", pct(sc.MinRate)))
		}
		if len(t) > 0 {
			ts = append(ts, sc.Name+", "+strings.Join(t, ", "))
		}
	}
	if len(ts) == 0 {
		return "none"
	}
	return strings.Join(ts, "; ")
}
