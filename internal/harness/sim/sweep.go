package sim

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Spread is a metric over the seeds of a sweep: its median and its worst
// value (the lowest for utilisation and fairness, the highest for waste,
// client rejections, delays and recovery times).
type Spread struct {
	Median, Worst float64
}

// SweepRow is one run of a suite (case, algorithm and number of groups)
// over the seeds of a sweep.
type SweepRow struct {
	Case      string
	Algorithm string
	Groups    int
	// Seeds is the number of seeds; Met how many met every goal of the
	// case, and Misses counts, per goal, the seeds that missed it.
	Seeds, Met int
	Misses     map[string]int
	// Spreads of the Metrics of the same names; DelayP99 and Recovery in
	// seconds, a recovery that never happened counting as +Inf. Fairness
	// leaves out seeds in which it was not measured.
	Utilisation, Waste, ClientRejected, Fairness, DelayP99 Spread
	// Recovery has one Spread per change of the case's scenario that is
	// measured.
	Recovery []Spread
}

// Sweep runs s once per seed (s.Seed is ignored) and returns a row per run,
// in the order of Suite.Run.
func Sweep(s Suite, seeds []uint64) ([]SweepRow, error) {
	if len(seeds) == 0 {
		return nil, fmt.Errorf("sim: Sweep needs at least one seed")
	}
	s.DropSeries = true
	var runs [][]Result // per seed
	for _, seed := range seeds {
		s.Seed = seed
		rs, err := s.Run()
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		runs = append(runs, rs)
	}
	rows := make([]SweepRow, len(runs[0]))
	for i, r := range runs[0] {
		row := SweepRow{Case: r.Case, Algorithm: r.Algorithm, Groups: r.Groups, Seeds: len(seeds), Misses: map[string]int{}}
		var util, waste, rej, fair, p99 []float64
		rec := make([][]float64, len(r.Metrics.Recovery))
		for _, rs := range runs {
			x := rs[i]
			m := x.Metrics
			util, waste, rej = append(util, m.Utilisation), append(waste, m.Waste), append(rej, m.ClientRejectedShare)
			p99 = append(p99, m.DelayP99.Seconds())
			if !math.IsNaN(m.Fairness) {
				fair = append(fair, m.Fairness)
			}
			for j, rc := range m.Recovery {
				switch {
				case !rc.Measured:
				case rc.Time < 0:
					rec[j] = append(rec[j], math.Inf(1))
				default:
					rec[j] = append(rec[j], rc.Time.Seconds())
				}
			}
			if Met(x.Checks) {
				row.Met++
			}
			for _, c := range x.Checks {
				if !c.Met {
					row.Misses[c.Goal]++
				}
			}
		}
		row.Utilisation, row.Waste, row.ClientRejected = spread(util, false), spread(waste, true), spread(rej, true)
		row.Fairness, row.DelayP99 = spread(fair, false), spread(p99, true)
		for _, xs := range rec {
			if len(xs) > 0 {
				row.Recovery = append(row.Recovery, spread(xs, true))
			}
		}
		rows[i] = row
	}
	return rows, nil
}

// spread returns the median of xs and its worst value: the highest if
// high is bad, else the lowest. NaN for no values.
func spread(xs []float64, high bool) Spread {
	if len(xs) == 0 {
		return Spread{math.NaN(), math.NaN()}
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	med := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	if high {
		return Spread{med, xs[len(xs)-1]}
	}
	return Spread{med, xs[0]}
}

// WriteSweep writes one table per family of cases with, per run, the
// median and the worst case of each metric over the seeds, and how many
// seeds met every goal (with the goals missed most often).
func WriteSweep(w io.Writer, cases []Case, rows []SweepRow) error {
	var b strings.Builder
	for _, f := range families(cases) {
		fmt.Fprintf(&b, "### %s\n\nMedian (worst) over the seeds.\n\n", f)
		b.WriteString("| case | algorithm | G | utilisation | waste | client-rejected | fairness | delay p99 | recovery | goals met | missed most |\n")
		b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|---|--:|---|\n")
		for _, c := range cases {
			if c.Family != f {
				continue
			}
			for _, r := range rows {
				if r.Case != c.Name {
					continue
				}
				var rec []string
				for _, s := range r.Recovery {
					rec = append(rec, fmt.Sprintf("%s (%s)", seconds(s.Median), seconds(s.Worst)))
				}
				if len(rec) == 0 {
					rec = []string{"–"}
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s (%s) | %s | %d / %d | %s |\n",
					r.Case, r.Algorithm, r.Groups, percents(r.Utilisation), percents(r.Waste), percents(r.ClientRejected),
					fairnesses(r.Fairness), seconds(r.DelayP99.Median), seconds(r.DelayP99.Worst), strings.Join(rec, ", "),
					r.Met, r.Seeds, missedMost(r.Misses))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func percents(s Spread) string { return fmt.Sprintf("%s (%s)", percent(s.Median), percent(s.Worst)) }

func fairnesses(s Spread) string {
	return fmt.Sprintf("%s (%s)", fairnessText(s.Median), fairnessText(s.Worst))
}

func seconds(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "never"
	case math.IsNaN(x):
		return "–"
	}
	return delayText(time.Duration(x * 1e9))
}

// missedMost names the goals missed by the most seeds, with their counts.
func missedMost(misses map[string]int) string {
	if len(misses) == 0 {
		return "–"
	}
	goals := make([]string, 0, len(misses))
	for g := range misses {
		goals = append(goals, g)
	}
	slices.SortFunc(goals, func(a, b string) int {
		if misses[a] != misses[b] {
			return misses[b] - misses[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, g := range goals[:min(2, len(goals))] {
		parts = append(parts, fmt.Sprintf("%s (%d)", g, misses[g]))
	}
	return strings.Join(parts, "; ")
}

// SweepFile is the name of the markdown report WriteSweepReport writes.
const SweepFile = "sweep.md"

// WriteSweepReport writes dir/SweepFile: the sweep's setup and its tables.
// command is the command line that made it, quoted in it.
func WriteSweepReport(dir, command string, s Suite, seeds []uint64, rows []SweepRow) error {
	var b strings.Builder
	fmt.Fprintf(&b, `# Throttling quality: seed sweep

Written by %s (package sim); do not edit by hand. Every run of
[results.md](results.md) (its setup, metrics and goals) repeated with %d seeds (%d to %d):
the median and the worst value of each metric, and how many seeds met every goal of the
case (with the goals missed by the most seeds). Delays and recovery times in seconds.

`, "`"+command+"`", len(seeds), seeds[0], seeds[len(seeds)-1])
	if err := WriteSweep(&b, s.Cases, rows); err != nil {
		return err
	}
	return writeFile(dir, SweepFile, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}
