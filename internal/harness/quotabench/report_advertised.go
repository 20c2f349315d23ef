package quotabench

import (
	"fmt"
	"strings"
)

// writeAdvertised writes the section of the scenarios against an
// advertised window (Scenario.Window) to b.
func writeAdvertised(b *strings.Builder, set Settings, results []Result) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Against a window that advertises what is left of it\n\n")
	p("Here the quota server is a fixed window of %d calls a minute, windows from its start, which sends on every "+
		"answer, success or 429, what is left of the window and when it resets, in the header family named "+
		"(`quotaserver --advertise`), and Retry-After on its 429s. The processes run with default flags and no shared "+
		"quota: each paces from the headers alone (`transforms/adaptive.AdvertisedRate` under the pacer), cooperating "+
		"through the server's count. Each generates its elements at once, bounded, as a batch job does. "+
		"`go run ./cmd/quotabench -scenarios advertised -out DIR` runs them alone. Columns as in the strict table; "+
		"the time ratio divides by the window's average rate (%g/s). Targets: waste ≤ %s, time ratio ≤ the scenario's.\n\n",
		WindowQuota, WindowQuota/60.0, pct(MaxWaste))
	writeStrictRows(b, set, results)
}
