package sim

import (
	"fmt"
	"time"
)

// FamilyAdvertised is the family of AdvertisedCases.
const FamilyAdvertised = "advertised quotas"

// Targets of the advertised quotas: the same as transforms/adaptive's
// model test of AdvertisedRate alone has them.
const (
	advertisedMaxWaste           = 0.01
	advertisedMinUse             = 0.97
	advertisedCompetitorMaxWaste = 0.02
	advertisedCompetitorMinUse   = 0.95
	// The same workers without the advertised quota waste ten times the
	// goal and more: 24 % with 8 workers, 52 % with 32.
	contrastMinWaste = 0.10
	// Limits on requests and tokens together: the binding limit, in each
	// window, and the waste of any limit.
	tokensMaxWaste = 0.02
	tokensMinUse   = 0.95
)

// Settings of AdvertisedCases.
const (
	advertisedWindowCapacity = 10         // requests/s: 600 a minute
	advertisedBucketCapacity = 500.0 / 60 // requests/s: 500 a minute
	advertisedOverload       = 4
	advertisedCompetitor     = 0.3 // of the capacity
	advertisedLatency        = 100 * time.Millisecond
	advertisedSkew           = time.Second      // Date's resolution
	advertisedInto           = 40 * time.Second // the aligned windows: the run starts at hh:mm:40
	advertisedDuration       = 5 * time.Minute
)

// AdvertisedWorkers are the numbers of workers of AdvertisedCases, each
// with one group.
var AdvertisedWorkers = []int{8, 32}

// advertisedTokens are the limits of an LLM API on requests and tokens
// together, a minute each: 500 requests, 40,000 input and 8,000 output
// tokens. The token counts are lognormal, σ 0.6 (a p99 four times the
// median): input median 90 (mean 108), output median 20 (mean 23.9). The
// output tokens bind, at 334 requests a minute, where the requests are
// 67 % used and the input tokens 90 %: a client that paced by either
// would be refused by the output tokens, and one that overshot the output
// tokens' pace by a tenth would be refused by the input tokens too.
var advertisedTokens = TokenQuota{Window: time.Minute, Requests: 500, Input: 40_000, Output: 8_000,
	InputMedian: 90, InputSigma: 0.6, OutputMedian: 20, OutputSigma: 0.6}

// tokensWorkers is the number of workers of the limits on tokens.
const tokensWorkers = 8

// AdvertisedAlgorithms are the algorithms of AdvertisedCases: the pacer,
// one per worker, and the oracle as the limit.
var AdvertisedAlgorithms = []string{Pacer, Oracle}

// AdvertisedCases returns quotas that the API advertises on every answer
// (Config.Advertise), shared by independent workers, each with one group
// and its own pacer and sharing nothing but the server's count, at 4×
// overload (MaxWait MatrixMaxWait), 100 ms calls sized to the pace, for
// five minutes, for 8 and 32 workers:
//   - a fixed window of 600 a minute, without Retry-After;
//   - an OpenAI-style limit of 500 a minute, a bucket of 500 refilled
//     continuously, with Retry-After;
//   - the window with an outside client (the competitor) taking 30 % of
//     the quota;
//   - the window with each worker's view of Reset a second off, later on
//     half the workers and earlier on the others (Config.AdvertiseSkew);
//   - the window aligned to the clock's minutes, the run starting 40 s
//     into one (AlignedWindow);
//   - the window without advertising, as the contrast, with the pacer
//     only;
//   - for 8 workers only, limits on requests and tokens together, as an
//     LLM API's (TokenLimits): 500 requests, 40,000 input and 8,000
//     output tokens a minute, a request's tokens lognormal and its output
//     known only once served, the output tokens binding; the capacity is
//     the requests per second they allow. And the same without
//     advertising, as the contrast, with the pacer only.
//
// The goals: waste at most 1 % over the whole run (no
// warm-up) and at least 97 % of each window's quota used but the run's
// first (for the bucket, of each minute's refill after the first); with
// the outside client, waste at most 2 % and 95 % of what it leaves used.
// Utilisation counts the first window too, over 100 % where it holds
// more than a minute of capacity: the bucket starts full, and the aligned
// windows' first 20 s hold a whole quota. With the limits on tokens:
// waste at most 2 %, the output tokens at least 95 % used in each window
// but the first, and no request refused by another limit.
func AdvertisedCases() []Case {
	var cs []Case
	for _, n := range AdvertisedWorkers {
		add := func(name, title string, competitor float64, cfg Config, g Goal, algs []string) {
			name = fmt.Sprintf("advertised/%s/%s", name, workersName(n))
			sc := overload(name, advertisedOverload, competitor, 0)
			sc.Duration = advertisedDuration
			cfg.Workers = n
			cs = append(cs, Case{Name: name, Family: FamilyAdvertised, Title: title + "; " + workersTitle(n), Scenario: sc,
				Config: cfg, Goal: g, Groups: []int{n}, Algorithms: algs})
		}
		config := func(b BackendModel, capacity float64) Config {
			return Config{Backend: b, Capacity: capacity, Latency: advertisedLatency, StartJitter: DefaultConfig(1).StartJitter,
				SizeCalls: true, MaxWait: MatrixMaxWait, Advertise: true}
		}
		goal := func(maxWaste, minUse float64, firstEnd time.Duration) Goal {
			return Goal{MaxWaste: maxWaste, MinWindowUse: minUse, Window: time.Minute, FirstWindowEnd: firstEnd}
		}

		window := config(FixedWindow(time.Minute, false), advertisedWindowCapacity)
		perMinute := fmt.Sprintf("600 a minute, advertised: %s", window.Backend.Description)
		add("window", perMinute, 0, window, goal(advertisedMaxWaste, advertisedMinUse, 0), AdvertisedAlgorithms)

		bucket := config(TokenBucket(time.Minute, true), advertisedBucketCapacity)
		add("bucket", fmt.Sprintf("500 a minute, advertised as OpenAI does: %s, full at the start", bucket.Backend.Description), 0,
			bucket, goal(advertisedMaxWaste, advertisedMinUse, 0), AdvertisedAlgorithms)

		add("window-competitor", fmt.Sprintf("%s; an outside client taking %g %% of the quota", perMinute, 100*advertisedCompetitor),
			advertisedCompetitor, window, goal(advertisedCompetitorMaxWaste, advertisedCompetitorMinUse, 0), AdvertisedAlgorithms)

		skewed := window
		skewed.AdvertiseSkew = advertisedSkew
		add("window-skew", fmt.Sprintf("%s; each worker's view of Reset %s off, later or earlier", perMinute, spaced(advertisedSkew)),
			0, skewed, goal(advertisedMaxWaste, advertisedMinUse, 0), AdvertisedAlgorithms)

		aligned := config(AlignedWindow(time.Minute, advertisedInto, false), advertisedWindowCapacity)
		add("aligned", fmt.Sprintf("600 a minute, advertised: %s, the first %s holding a whole quota", aligned.Backend.Description,
			spaced(time.Minute-advertisedInto)), 0, aligned, goal(advertisedMaxWaste, advertisedMinUse, time.Minute-advertisedInto),
			AdvertisedAlgorithms)

		silent := window
		silent.Advertise = false
		add("window-silent", fmt.Sprintf("600 a minute, not advertised, as the contrast: %s", window.Backend.Description), 0,
			silent, Goal{MinWaste: contrastMinWaste}, []string{Pacer})
	}
	return append(cs, tokensCases()...)
}

// tokensCases returns the cases of AdvertisedCases with limits on
// requests and tokens together.
func tokensCases() []Case {
	capacity, binding := advertisedTokens.rate()
	cfg := Config{Backend: TokenLimits(advertisedTokens), Capacity: capacity, Latency: advertisedLatency,
		StartJitter: DefaultConfig(1).StartJitter, SizeCalls: true, MaxWait: MatrixMaxWait, Advertise: true, Workers: tokensWorkers}
	limits := fmt.Sprintf("%s requests, %s input and %s output tokens a minute", thousands(advertisedTokens.Requests),
		thousands(advertisedTokens.Input), thousands(advertisedTokens.Output))
	add := func(name, title string, cfg Config, g Goal, algs []string) Case {
		name = fmt.Sprintf("advertised/%s/%s", name, workersName(tokensWorkers))
		sc := overload(name, advertisedOverload, 0, 0)
		sc.Duration = advertisedDuration
		return Case{Name: name, Family: FamilyAdvertised, Title: title + "; " + workersTitle(tokensWorkers), Scenario: sc,
			Config: cfg, Goal: g, Groups: []int{tokensWorkers}, Algorithms: algs}
	}
	silent := cfg
	silent.Advertise = false
	return []Case{
		add("tokens", fmt.Sprintf("%s, advertised: %s; %s bind", limits, cfg.Backend.Description, binding), cfg,
			Goal{MaxWaste: tokensMaxWaste, Binding: binding, MinBindingUse: tokensMinUse, NoOtherRefusals: true}, AdvertisedAlgorithms),
		add("tokens-silent", fmt.Sprintf("%s, not advertised, as the contrast: %s", limits, cfg.Backend.Description), silent,
			Goal{MinWaste: contrastMinWaste}, []string{Pacer}),
	}
}

// WindowUse returns the least share of a quota window's quota that a run
// used, and when that window began: the accepted calls ÷ Series.Limit
// (the quota less what the competitor took, unless the offered load was
// lower), each summed over the window's seconds. The windows are window
// long, the first ending firstEnd after the start (zero: window), both
// whole seconds; the run's first window, the windows before the warm-up's
// end and a last one cut short by the end of the run are left out. ok is
// false when no window is left (or the series were dropped).
func WindowUse(sc Scenario, s Series, window, firstEnd time.Duration) (use float64, from time.Duration, ok bool) {
	if window <= 0 {
		return 0, 0, false
	}
	start := firstEnd
	if start <= 0 {
		start = window
	}
	for start < sc.WarmUp {
		start += window
	}
	for ; start+window <= sc.Duration && int((start+window)/time.Second) <= len(s.Accepted); start += window {
		var acc, limit float64
		for i := int(start / time.Second); i < int((start+window)/time.Second); i++ {
			acc += float64(s.Accepted[i])
			limit += s.Limit[i]
		}
		if u := ratio(acc, limit); !ok || u < use {
			use, from, ok = u, start, true
		}
	}
	return use, from, ok
}
