package sim

import (
	"fmt"
	"io"
	"strings"
)

// CrossedFile is the name of the crossed grid's page, written by
// WriteCrossed.
const CrossedFile = "crossed.md"

// crossedCell returns the grid's cell text of r: ✓ or ✗, the share of the
// quota used over the run and the waste, or what a cell not done did.
func crossedCell(r Result) string {
	m, o := r.Metrics, r.Outcomes
	mark := "✓"
	if !Met(r.Checks) {
		mark = "✗"
	}
	use := fmt.Sprintf("%.0f %%", 100*m.RunUse)
	if o.Success != o.Arrived {
		use = fmt.Sprintf("%d of %d", o.Success, o.Arrived)
	}
	return fmt.Sprintf("%s %s, %s", mark, use, percent(m.Waste))
}

// WriteCrossed writes the page of the crossed grid's results: its setup,
// then one table, a row per limiter and header family and a column per
// latency and number of workers, each cell the share of the quota used
// over the run and the waste, ✗ where a target is missed; then each miss.
// command is the command line that made it.
func WriteCrossed(w io.Writer, command string, cases []Case, results []Result) error {
	byCase := map[string]Result{}
	met := 0
	for _, r := range results {
		if r.Algorithm != Pacer {
			continue
		}
		byCase[r.Case] = r
		if Met(r.Checks) {
			met++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# The crossed grid: latency × limiter × headers × workers

Written by %s (package sim, CrossedCases); do not edit by hand. The simulation
is deterministic; %s pins which cell meets which target.

Every capability of the paced mode at once, as users meet them: a bounded input
(a minute of the quota, two for the window of a minute; 150 a worker with eight)
through the transform's firing with default settings (calls sized to the pace, no
bound on an element's wait), each worker with one group and its own pacer, sharing
nothing but the API's quota. Refusals are answered at once, as gateways answer them.
The header families tell the quota as the quota server sends them and package
clientcall reads them: IETF draft-8 (limit, window, remaining, a reset in whole
seconds from the answer), X-RateLimit (the reset in epoch seconds, corrected with a
Date in whole seconds), OpenAI's (a bucket's: capacity, remaining, when full).

**Targets**: every element succeeds, no call times out; 90 %% of the quota's rate
over the run (the calls accepted ÷ the capacity × the send of the last accepted:
the last answers' latency is left out), and 95 %% from the tenth second on where
the limiter's rate is even over a second (GCRA, the bucket, the window of a second);
waste (refusals ÷ calls) at most 1 %% when advertised, 2 %% when not, 3 %% for the
drifting window, 5 %% for eight workers that are told nothing. A queue refuses
nothing: done within 90 %% of its rate plus the latency (its p99), answers within
twice the latency. A cell reads "use of the quota over the run, waste", or the
elements done when not all were.

**%d of %d cells meet every target.**

`, command, "`TestCrossedGrid`", met, len(byCase))
	var cols []string
	for _, lat := range crossedLatencies {
		for _, wk := range CrossedWorkers {
			cols = append(cols, fmt.Sprintf("%s, %s", lat.name, workersName(wk)))
		}
	}
	fmt.Fprintf(&b, "| limiter | headers | %s |\n|---|---|%s\n", strings.Join(cols, " | "),
		strings.Repeat("--:|", len(cols)))
	for _, lim := range crossedLimiters() {
		for _, h := range CrossedHeaders {
			headers := "none"
			if h != HeadersExact {
				headers = h.String()
			}
			var cells []string
			for _, lat := range crossedLatencies {
				for _, wk := range CrossedWorkers {
					r, ok := byCase[fmt.Sprintf("x/%s/%s/%s/%dw", lat.name, lim.name, headers, wk)]
					if !ok {
						continue
					}
					cells = append(cells, crossedCell(r))
				}
			}
			if len(cells) == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", lim.name, headers, strings.Join(cells, " | "))
		}
	}
	b.WriteString("\n## The limiters\n\n")
	for _, lim := range crossedLimiters() {
		fmt.Fprintf(&b, "- `%s`: %s, %g requests/s.\n", lim.name, lim.model.Description, lim.capacity)
	}
	b.WriteString("\n## Misses\n\n")
	for _, c := range cases {
		r, ok := byCase[c.Name]
		if !ok || Met(r.Checks) {
			continue
		}
		var miss []string
		for _, ch := range r.Checks {
			if !ch.Met {
				miss = append(miss, fmt.Sprintf("%s: %s", ch.Goal, ch.Got))
			}
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", c.Name, strings.Join(miss, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
