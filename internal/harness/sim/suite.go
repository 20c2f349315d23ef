package sim

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// Case is one line of the report: a scenario run with one configuration
// (backend, latency, calls in flight…) and the goals a throttle is to
// meet there. A Suite runs it with every algorithm and number of groups.
type Case struct {
	// Name identifies the case; unique in a suite.
	Name string
	// Family groups cases into one table of the report, such as "fixed
	// windows".
	Family string
	// Title describes the case in one line.
	Title    string
	Scenario Scenario
	// Config is the configuration of its runs; Groups and Seed are set by
	// the Suite.
	Config Config
	Goal   Goal
	// Groups, if set, replaces the Suite's Groups for this case.
	Groups []int
	// Algorithms, if set, names the only algorithms of the Suite to run on
	// this case.
	Algorithms []string
}

// Suite is a set of runs: every case with every algorithm for every number
// of groups.
type Suite struct {
	Cases      []Case
	Algorithms []Algorithm
	Groups     []int
	// Seed is the seed of every run; zero means DefaultSeed.
	Seed uint64
	// DropSeries leaves the per-second Series out of the results, to save
	// memory when only metrics are wanted (sweeps).
	DropSeries bool
}

// ClassicGroups are the numbers of groups of the classic scenarios, and
// MatrixGroups those of the matrix.
var (
	ClassicGroups = []int{1, 8}
	MatrixGroups  = []int{1, 8, 32}
)

// DefaultSuite is the standard report: the matrix (G = 1, 8 and 32), the
// cases closer to the limit (LimitCases), the slow APIs (SlowCases), the
// advertised quotas (AdvertisedCases), the classic scenarios and the
// classic scenarios in the per-element model (G = 1 and 8), with the
// standard algorithms.
func DefaultSuite() Suite {
	cs := append(MatrixCases(), LimitCases()...)
	cs = append(cs, SlowCases()...)
	cs = append(cs, AdvertisedCases()...)
	for _, c := range append(ClassicCases(), PerElementCases()...) {
		c.Groups = ClassicGroups
		cs = append(cs, c)
	}
	return Suite{Cases: cs, Algorithms: Algorithms(), Groups: MatrixGroups}
}

// Run runs every combination, in parallel on up to GOMAXPROCS goroutines,
// and returns the results ordered by case, then groups, then algorithm,
// with the goals of each case checked. The results do not depend on the
// parallelism.
func (s Suite) Run() ([]Result, error) {
	type job struct {
		i   int
		c   *Case
		alg Algorithm
		cfg Config
	}
	var jobs []job
	names := map[string]bool{}
	for i := range s.Cases {
		c := &s.Cases[i]
		if names[c.Name] {
			return nil, fmt.Errorf("sim: two cases named %s", c.Name)
		}
		names[c.Name] = true
		if err := c.Goal.validate(c.Scenario); err != nil {
			return nil, err
		}
		groups := s.Groups
		if c.Groups != nil {
			groups = c.Groups
		}
		for _, g := range groups {
			for _, alg := range s.Algorithms {
				if c.Algorithms != nil && !slices.Contains(c.Algorithms, alg.Name) {
					continue
				}
				cfg := c.Config
				cfg.Groups, cfg.Seed = g, s.Seed
				jobs = append(jobs, job{len(jobs), c, alg, cfg})
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
				r, err := Run(j.c.Scenario, j.alg, j.cfg)
				if err != nil {
					errs[j.i] = fmt.Errorf("%s/%s/G=%d: %w", j.c.Name, j.alg.Name, j.cfg.Groups, err)
					continue
				}
				r.Case = j.c.Name
				results[j.i] = r
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
	for i, j := range jobs {
		results[i].Checks = j.c.Goal.Check(j.c.Scenario, results[i], findOracle(results, j.c.Name, j.cfg.Groups))
	}
	if s.DropSeries { // after the checks, which may read them
		for i := range results {
			results[i].Series = Series{}
		}
	}
	return results, nil
}

// findOracle returns the oracle's result in case c with g groups, or nil.
func findOracle(rs []Result, c string, g int) *Result {
	for i := range rs {
		if rs[i].Case == c && rs[i].Groups == g && rs[i].Algorithm == Oracle {
			return &rs[i]
		}
	}
	return nil
}
