package livebench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// family groups scenarios that share a setup and a table in the report.
type family struct {
	name, title, setup string
	bounded            bool
}

var families = []family{
	{
		name:  "token-bucket",
		title: "Token bucket, quota changing mid-run",
		setup: "A token bucket of 50 requests/s (refilled in 100 ms steps). The pipeline: a streaming source " +
			"(`--generate N --generate_rate 200`, 200 elements/s for the run's duration), `--groups 2 --batch_size 10 " +
			"--batch_interval 100ms` (a ceiling of 200 calls/s), `--max_buffered 20`: a group sheds to client-throttled " +
			"what arrives while 20 elements wait, so that the backlog of a stream offered four times the quota stays " +
			"small and the run ends soon after its source. Measured over the run's duration from the pipeline's first request, " +
			"its first second left out.",
	},
	{
		name:  "competitor",
		title: "A backend shared with an uncontrolled client",
		setup: "The token bucket and pipeline of the first family, and a second client sending to the same quota at " +
			"a fixed rate (a multiple of the quota, set by `-competitor`) that never throttles or retries: each of its " +
			"requests names it in the `" + testserver.ClientHeader + "` header, so that the server counts it apart. " +
			"*Utilisation* is the pipeline's accepted calls divided by the capacity left to it: each second, the " +
			"quota minus what the competitor got accepted (the simulator's definition). With a " +
			"competitor at 1× the quota, what is left is what the competitor lost to the pipeline, so this " +
			"utilisation is near 100 % whenever the bucket is used up; the pipeline's share (its accepted calls next " +
			"to the competitor's) and its waste tell more. *Waste* is the pipeline's calls only.",
	},
	{
		name:  "per-minute",
		title: "A per-minute quota, scaled down",
		setup: "Cloud DLP's default quota is 600 requests per 60 s fixed window; here time is scaled down five times: " +
			"a fixed window of 120 requests per 12 s (the same 10 requests/s on average), windows starting when the " +
			"server starts (on a whole second). Each run lasts three windows (36 s), measured over those whole windows. " +
			"The pipeline: a streaming source of 40 elements/s (four times the quota), `--groups 8`, `--max_buffered 5` " +
			"(40 elements waiting at most), default batches. The server sends Retry-After (the wait until the next window, in whole seconds) on its " +
			"429s, or none (`testserver.Config.NoRetryAfter`).",
	},
	{
		name:    "window-latency",
		title:   "Fixed window with latency, bounded input",
		bounded: true,
		setup: "A fixed window of 200 requests per 4 s (50/s), windows starting on a whole second, and 40 ms added " +
			"to every answer; the HTTP caller keeps its connections alive. The pipeline: 2,000 generated elements " +
			"(`--generate 2000`, all there at the start), `--calls_in_flight 8`, other flags at their defaults. " +
			"*Time* is the wall time of the pipeline's run (Prism's start and the writing of the output files " +
			"included); *ideal* is elements ÷ the quota's rate. A run that does not get every element through may end " +
			"early: its time then fails the target whatever it is.",
	},
	{
		name:    "gcra",
		title:   "Strict limiter (GCRA), bounded input, default flags",
		bounded: true,
		setup: "The server's strict mode, GCRA at 10 requests/s: with no burst, requests must come at least 100 ms " +
			"apart; with a burst of 10, ten may come back to back after an idle second. The pipeline: 600 generated " +
			"elements with default flags (only the source, the URL, the output prefix and `--throttle_mode` set). " +
			"*Time* and *ideal* as in the previous family. `make livebench LIVE_SCENARIOS=gcra-600` runs the first " +
			"alone.",
	},
	{
		name:    "drift-window",
		title:   "Drifting fixed window without Retry-After, bounded input, default flags",
		bounded: true,
		setup: "An API whose counter resets on a schedule of its own: a fixed window of 99 requests whose length is " +
			"drawn anew for each window, 4 s plus a random 0–1 s (`testserver.Config.WindowJitter`, from a fixed seed), " +
			"the first having begun a random 0–4 s before the server started, so that windows line up neither with " +
			"the run's start nor with whole seconds. Its 429s carry no Retry-After, and 40 ms is added to every answer " +
			"(the HTTP caller keeps its connections alive). The pipeline: 2,000 generated elements with default flags " +
			"(one group, one call in flight): 99 calls one after another take about 4 s, nearly a whole window. " +
			"*Time* as in the window-latency family; *ideal* is elements ÷ the quota's average rate, 99 per 4.5 s " +
			"(the mean window): 2,000 ÷ 22/s ≈ 90.9 s. The time counts only if at least 99 % of the elements succeeded.",
	},
	{
		name:    "slow-api",
		title:   "A slow API, bounded input, default flags",
		bounded: true,
		setup: "Servers that answer in seconds, as embedding, translation and LLM APIs do. *slow-2s*: the server's " +
			"strict mode, GCRA at 20 requests/s with no burst, answering each request 2 s late: by Little's law, 40 " +
			"calls must be under way to use the quota; the quota server delays a refusal as long as an answer, the harder " +
			"case. *slow-2s-at-once*: refusals answered at once, as nginx's limit_req, Envoy's rate limit filter and " +
			"the hosted LLM APIs answer them before the backend works (`--refuse-at-once`). *slow-lognormal*: GCRA at 500 a minute, each request's latency " +
			"drawn from a lognormal of median 3 s and p99 20 s (mean 4.2 s: about 35 calls under way). *queue-50*: " +
			"a server that never refuses and serves 50 requests/s in arrival order, each answer 2 s after its turn " +
			"(nginx's limit_req with a burst and no nodelay, an inference server's queue): what is sent faster waits " +
			"in its queue, and a call waiting past `--call_timeout` (5 s here) fails. Default flags size the calls " +
			"under way to the pace at the measured latency, bound them by the latency's climb above its floor, and let " +
			"calls outlive the batch that sent them; *queue-50-fixed256* fixes 256 calls under way instead. The paced " +
			"mode only (the SRE mode sends what it does not reject at once and is not made for a slow API). *Time* and " +
			"*ideal* as in the window-latency family; the target is 95 % of the quota's rate (or of the queue's), plus " +
			"one latency for the last answers (the p99 for the lognormal). *p99 answer* is the 99th percentile of the " +
			"server's time to answer the run's calls (its queue's wait and its latency), against the unloaded latency.",
	},
	{
		name:    crossedFamily,
		title:   "Crossed: latency, limiter and advertised quota, bounded input, default flags",
		bounded: true,
		setup: "The cases users meet, crossed: an API that answers in seconds and advertises its quota, as the hosted " +
			"LLM APIs do, beside the same API advertising nothing and the same headers answered at once. The server is a " +
			"fixed window of the row's quota per 1 s (windows starting on a whole second); each accepted call is answered " +
			"after the row's latency (2 s, 5 s, a lognormal of median 3 s and p99 20 s, or none: `0s`), each refusal at " +
			"once with Retry-After (`--refuse-at-once`), and every answer, success or 429, carries the row's headers: " +
			"*none*, *ietf* (draft 8's `RateLimit-Policy` and `RateLimit`), *xrl* (`X-RateLimit-*`, the reset in epoch " +
			"seconds) or *openai* (`x-ratelimit-*-requests`). The last row enforces 100/s and advertises 10/s " +
			"(`testserver.Config.AdvertiseQuota`). The pipeline: the row's generated elements with default flags (only " +
			"the source, the URL and the output prefix set), one process, the paced mode (the default). Its calls reach " +
			"the server through a front in the harness that names them (`" + testserver.ClientHeader + "`), so that the " +
			"server's own clock times its first request and its last accepted one (`testserver.Handler.Span`). *Waste* " +
			"is the server's 429s ÷ its requests. *From 10th s* is the server's accepted requests per second over the " +
			"whole seconds from the tenth after the second of the first request (seconds 0–9 left out, while the pacer " +
			"learns) to the second of the last accepted request (counted whole), ÷ the quota's rate; *over the run* is " +
			"all the accepted requests ÷ the time from the first request to the last accepted one, ÷ the quota's rate. " +
			"*Time* is the pipeline's wall time (Prism's start included). A rate counts only if every element succeeded. " +
			"A run still going 1.4 × its ideal time (its elements at the rate it is held to), plus one latency (the p99 " +
			"for the lognormal) and 15 s, has missed the 90 % target already: the harness interrupts it there (the " +
			"throttle routes what it holds to client-throttled, calls under way finish) and marks its time *stopped*. " +
			"`make livebench LIVE_SCENARIOS=crossed` runs the family alone.",
	},
	{
		name:  "priority",
		title: "Priority tiers at twice the quota",
		setup: "A token bucket of 50 requests/s (refilled in 100 ms steps), offered twice that: a source publishes 100 " +
			"elements/s for the run's duration to a Pub/Sub subscription (an in-process emulator, pstest), every fifth " +
			"element `{\"seq\":N,\"tier\":\"high\"}` and the others `{\"seq\":N,\"tier\":\"low\"}` (20/s high, 80/s low). " +
			"The pipeline reads it with `--subscription --idle_timeout 5s --priority=json:tier --max_wait 5s`, other " +
			"flags at their defaults (one group, a batch each second), in the paced mode only: SRE's default strategy " +
			"routes what it rejects at once, so `--max_wait` has no part there. The quota leaves room for every high " +
			"element and for 30 of the 80 low ones each second; the rest of the lows wait their 5 s and go to " +
			"client-throttled (*expired*). The second scenario is the same stream without `--priority`. The source " +
			"starts once the pipeline is up (a warm-up message, not counted, has reached the server), and every element " +
			"it published is counted, the pacer's first seconds, while it learns the quota, included. An element's " +
			"*wait* is from its publication to the server's receipt of the call that was accepted (a tap in front of " +
			"the server's handler records it): it includes the read from Pub/Sub and the wait for the group's next " +
			"batch, common to both tiers, so a low element's wait can pass `--max_wait`, which counts from its arrival " +
			"in the queue. Medians and 99th percentiles are of the successes' waits (nearest rank). *Other* counts " +
			"server-throttled elements (answered 429, then out of time) and errors; *waste* is the run's.",
	},
}

// scenario is one real-time run setup.
type scenario struct {
	name, family, about string
	server              testserver.Config

	// Pipeline flags; zero values leave a flag at its default.
	groups, batch, callsInFlight, maxBuffered int
	maxWait                                   time.Duration
	interval                                  time.Duration
	callTimeout                               time.Duration

	// Streaming runs: the source's rate (elements/s) and, for fixed windows,
	// the run's length in windows (else it is -duration).
	rate    float64
	windows int
	// A change at this fraction of the run (0 = none): the quota becomes
	// newQuota per second, or an outage answers 429 for outageFor.
	change    float64
	newQuota  int
	outageFor time.Duration
	// competitor: a second client at -competitor × the quota's rate.
	competitor bool

	// Bounded runs: this many generated elements.
	elements int

	// Priority runs: a Pub/Sub source at rate whose every highEvery-th
	// element is high and the others low (runPriority), read with
	// --priority=priorityFlag ("" leaves every element normal).
	highEvery    int
	priorityFlag string
	// modes, if set, are the only throttle modes the scenario runs in.
	modes []string
	// bound, if positive, interrupts a bounded run still going bound ×
	// its ideal time at the rate it is held to, plus one latency and
	// boundSlack, after its start (see deadline).
	bound float64

	targets []target
}

// quotaRate is the scenario's starting quota in requests per second, on
// average: Quota per mean window, which for drifting fixed windows is
// Period + WindowJitter/2 (each window lasts Period plus a uniform draw in
// [0, WindowJitter)).
func (sc scenario) quotaRate() float64 {
	return float64(sc.server.Quota) / sc.meanPeriod().Seconds()
}

// meanPeriod is the quota's period, or its mean window if the windows
// drift.
func (sc scenario) meanPeriod() time.Duration {
	p := sc.server.Period
	if p == 0 {
		p = testserver.DefaultPeriod
	}
	return p + sc.server.WindowJitter/2
}

// bounded reports whether the scenario is a bounded input.
func (sc scenario) bounded() bool { return sc.elements > 0 }

// ideal is a bounded run's ideal time: elements ÷ the quota's average
// rate (see quotaRate).
func (sc scenario) ideal() time.Duration {
	return time.Duration(float64(sc.elements) / sc.quotaRate() * float64(time.Second))
}

// priority reports whether the scenario is a priority run.
func (sc scenario) priority() bool { return sc.highEvery > 0 }

// runsIn reports whether the scenario runs in throttle mode m.
func (sc scenario) runsIn(m string) bool { return sc.modes == nil || slices.Contains(sc.modes, m) }

// runFor is how long a streaming run's source emits, given -duration.
func (sc scenario) runFor(d time.Duration) time.Duration {
	if sc.windows > 0 {
		return time.Duration(sc.windows) * sc.server.Period
	}
	return d
}

// Pacing targets, per family.
var (
	tokenBucketTargets = []target{{metric: utilisation, limit: 0.97}, {metric: waste, atMost: true, limit: 0.03}}
	changeTargets      = append(tokenBucketTargets[:2:2], target{metric: recovery, atMost: true, limit: 10})
	boundedTargets     = []target{{metric: succeeded, limit: 1}, {metric: waste, atMost: true, limit: 0.05}, {metric: timeRatio, atMost: true, limit: 1.15}}
	driftTargets       = []target{{metric: succeeded, limit: 0.99}, {metric: waste, atMost: true, limit: 0.03}, {metric: timeRatio, atMost: true, limit: 1.10}}
	// queueTargets: every element succeeds (no call timed out), 95 % of
	// the server's capacity (plus one answer's latency), and a short
	// queue.
	queueTargets = []target{{metric: succeeded, limit: 1},
		{metric: timeRatio, atMost: true, limit: 1.06}, // (12,000 ÷ 50 ÷ 0.95 + 2) ÷ (12,000 ÷ 50) = 1.061
		{metric: delayP99Ratio, atMost: true, limit: 2}}
	// slowTargets: the 2 s API's, every element succeeds, waste ≤ 2 % and
	// 95 % of the quota's rate plus one latency, (2,000 ÷ 20 ÷ 0.95 + 2) ÷ 100.
	slowTargets = []target{{metric: succeeded, limit: 1}, {metric: waste, atMost: true, limit: 0.02},
		{metric: timeRatio, atMost: true, limit: 1.073}}
	// crossedTargets: every element succeeds, none client-throttled,
	// waste ≤ 1 % with headers (2 % without), 95 % of the quota's rate
	// from the 10th second and 90 % over the run.
	crossedTargets = []target{{metric: succeeded, limit: 1}, {metric: clientThrottled, atMost: true, limit: 0},
		{metric: waste, atMost: true, limit: 0.01}, {metric: steadyShare, limit: 0.95}, {metric: runShare, limit: 0.90}}
	crossedBareTargets = []target{{metric: succeeded, limit: 1}, {metric: clientThrottled, atMost: true, limit: 0},
		{metric: waste, atMost: true, limit: 0.02}, {metric: steadyShare, limit: 0.95}, {metric: runShare, limit: 0.90}}
	priorityTargets = []target{{metric: highSucceeded, limit: 1}, {metric: highP99Ratio, atMost: true, limit: 1}, {metric: waste, atMost: true, limit: 0.05}}
)

// streamMaxWait bounds the backlog of the streaming runs (offered 4× the
// quota): what waited longer goes to client_throttled, so the queue always
// holds work for the throttle and the run ends with its source. The other
// flags are the defaults.
const streamMaxWait = 2 * time.Second

var scenarios = []scenario{
	{
		name: "steady", family: "token-bucket", about: "offered 4× a 50/s quota throughout",
		server: testserver.Config{Quota: 50}, groups: 2, maxWait: streamMaxWait,
		rate: 200, targets: tokenBucketTargets,
	},
	{
		name: "quota-rise", family: "token-bucket", about: "the quota of 50/s doubles to 100/s at half time (offered stays 200/s)",
		server: testserver.Config{Quota: 50}, groups: 2, maxWait: streamMaxWait,
		rate: 200, change: 0.5, newQuota: 100, targets: changeTargets,
	},
	{
		name: "outage", family: "token-bucket", about: "every call answered 429 for 10 s from a third of the run, quota 50/s otherwise",
		server: testserver.Config{Quota: 50}, groups: 2, maxWait: streamMaxWait,
		rate: 200, change: 1.0 / 3, outageFor: 10 * time.Second, targets: changeTargets,
	},
	{
		name: "competitor", family: "competitor", about: "a 50/s quota shared with the competitor; the pipeline offered 200/s",
		server: testserver.Config{Quota: 50}, groups: 2, maxWait: streamMaxWait,
		rate: 200, competitor: true,
		targets: []target{{metric: utilisation, limit: 0.90}, {metric: waste, atMost: true, limit: 0.10}},
	},
	{
		name: "minute-retry-after", family: "per-minute", about: "120 per 12 s fixed window, 429s with Retry-After, 8 groups",
		server: testserver.Config{Quota: 120, Period: 12 * time.Second, Mode: testserver.FixedWindow},
		groups: 8, maxWait: streamMaxWait, rate: 40, windows: 3,
		targets: []target{{metric: utilisation, limit: 0.97}, {metric: waste, atMost: true, limit: 0.03}},
	},
	{
		name: "minute-no-retry-after", family: "per-minute", about: "the same without Retry-After",
		server: testserver.Config{Quota: 120, Period: 12 * time.Second, Mode: testserver.FixedWindow, NoRetryAfter: true},
		groups: 8, maxWait: streamMaxWait, rate: 40, windows: 3,
		targets: []target{{metric: utilisation, limit: 0.97}, {metric: waste, atMost: true, limit: 0.05}},
	},
	{
		name: "window-latency", family: "window-latency", about: "2,000 elements, 200 per 4 s fixed window, 40 ms per request, 8 calls in flight",
		server:        testserver.Config{Quota: 200, Period: 4 * time.Second, Mode: testserver.FixedWindow, Latency: 40 * time.Millisecond},
		callsInFlight: 8, elements: 2000, targets: boundedTargets,
	},
	{
		name: "gcra-600", family: "gcra", about: "600 elements, GCRA 10/s with no burst, default flags",
		server:   testserver.Config{Quota: 10, Mode: testserver.GCRA},
		elements: 600, targets: boundedTargets,
	},
	{
		name: "gcra-600-burst10", family: "gcra", about: "600 elements, GCRA 10/s with a burst of 10, default flags",
		server:   testserver.Config{Quota: 10, Mode: testserver.GCRA, Burst: 10},
		elements: 600, targets: boundedTargets,
	},
	{
		name: "drift-window", family: "drift-window",
		about: "2,000 elements, 99 per fixed window of 4–5 s (drifting, not aligned), no Retry-After, 40 ms per request, " +
			"default flags; ideal 2,000 ÷ (99 per 4.5 s, the mean window) ≈ 90.9 s",
		server: testserver.Config{Quota: 99, Period: 4 * time.Second, WindowJitter: time.Second, Mode: testserver.FixedWindow,
			NoRetryAfter: true, Latency: 40 * time.Millisecond, Seed: 1},
		elements: 2000, targets: driftTargets,
	},
	{
		name: "slow-2s", family: "slow-api", about: "2,000 elements, GCRA 20/s with no burst, 2 s per request, default flags",
		server:   testserver.Config{Quota: 20, Mode: testserver.GCRA, Latency: 2 * time.Second},
		elements: 2000, modes: []string{"paced"},
		targets: slowTargets,
	},
	{
		name: "slow-2s-bucket", family: "slow-api",
		about:    "the same with the quota server's default limiter, a token bucket of 20 refilled in 100 ms steps",
		server:   testserver.Config{Quota: 20, Latency: 2 * time.Second},
		elements: 2000, modes: []string{"paced"},
		targets: slowTargets,
	},
	{
		name: "slow-2s-at-once", family: "slow-api",
		about: "slow-2s with each refusal answered at once, as a gateway in front of a slow backend answers it " +
			"(the quota server's `--refuse-at-once`)",
		server:   testserver.Config{Quota: 20, Mode: testserver.GCRA, Latency: 2 * time.Second, RefuseAtOnce: true},
		elements: 2000, modes: []string{"paced"},
		targets: slowTargets,
	},
	{
		name: "slow-2s-bucket-at-once", family: "slow-api",
		about:    "slow-2s-bucket with each refusal answered at once",
		server:   testserver.Config{Quota: 20, Latency: 2 * time.Second, RefuseAtOnce: true},
		elements: 2000, modes: []string{"paced"},
		targets: slowTargets,
	},
	{
		name: "slow-lognormal", family: "slow-api",
		about: "3,000 elements, GCRA 500 a minute with no burst, each request's latency lognormal (median 3 s, p99 20 s), " +
			"default flags; the target allows one p99 latency for the last answers",
		server:   testserver.Config{Quota: 500, Period: time.Minute, Mode: testserver.GCRA, Latency: 3 * time.Second, LatencyP99: 20 * time.Second, Seed: 1},
		elements: 3000, modes: []string{"paced"},
		targets: []target{{metric: succeeded, limit: 1}, {metric: waste, atMost: true, limit: 0.02},
			{metric: timeRatio, atMost: true, limit: 1.10}}, // (360 s ÷ 0.95 + 20 s) ÷ 360 s = 1.108
	},
	{
		name: "queue-50", family: "slow-api",
		about: "12,000 elements, a server that queues at 50/s instead of refusing, 2 s per request, `--call_timeout=5s`, " +
			"default flags otherwise",
		server:   testserver.Config{Quota: 50, Mode: testserver.Queue, Latency: 2 * time.Second},
		elements: 12000, callTimeout: 5 * time.Second, modes: []string{"paced"},
		targets: queueTargets,
	},
	{
		name: "queue-50-fixed256", family: "slow-api",
		about: "the same with `--calls_in_flight=256`, for comparison: a fixed bound is not sized to the pace, and the " +
			"latency does not bound it",
		server:   testserver.Config{Quota: 50, Mode: testserver.Queue, Latency: 2 * time.Second},
		elements: 12000, callTimeout: 5 * time.Second, callsInFlight: 256, modes: []string{"paced"},
		targets: queueTargets, // the same targets, to show which it misses
	},
	crossed("x-fixed20-2s-none", "1,200 elements, a fixed window of 20 per 1 s, 2 s answers, no quota headers",
		testserver.Config{Quota: 20, Latency: 2 * time.Second}, 1200, crossedBareTargets),
	crossed("x-fixed20-2s-ietf", "the same advertising the window in IETF draft-8 headers",
		testserver.Config{Quota: 20, Latency: 2 * time.Second, Advertise: testserver.AdvertiseIETF}, 1200, crossedTargets),
	crossed("x-fixed20-2s-xrl", "the same in X-RateLimit headers (epoch resets)",
		testserver.Config{Quota: 20, Latency: 2 * time.Second, Advertise: testserver.AdvertiseX}, 1200, crossedTargets),
	crossed("x-fixed20-2s-openai", "the same in OpenAI's headers",
		testserver.Config{Quota: 20, Latency: 2 * time.Second, Advertise: testserver.AdvertiseOpenAI}, 1200, crossedTargets),
	crossed("x-fixed10-5s-none", "600 elements, a fixed window of 10 per 1 s, 5 s answers, no quota headers",
		testserver.Config{Quota: 10, Latency: 5 * time.Second}, 600, crossedBareTargets),
	crossed("x-fixed10-5s-ietf", "the same in IETF draft-8 headers",
		testserver.Config{Quota: 10, Latency: 5 * time.Second, Advertise: testserver.AdvertiseIETF}, 600, crossedTargets),
	crossed("x-fixed10-logn-none", "600 elements, a fixed window of 10 per 1 s, lognormal answers (median 3 s, p99 20 s), "+
		"no quota headers",
		testserver.Config{Quota: 10, Latency: 3 * time.Second, LatencyP99: 20 * time.Second, Seed: 1}, 600, crossedBareTargets),
	crossed("x-fixed10-logn-ietf", "the same in IETF draft-8 headers",
		testserver.Config{Quota: 10, Latency: 3 * time.Second, LatencyP99: 20 * time.Second, Seed: 1,
			Advertise: testserver.AdvertiseIETF}, 600, crossedTargets),
	crossed("x-fixed10-0s-ietf", "600 elements, a fixed window of 10 per 1 s answering at once, IETF draft-8 headers",
		testserver.Config{Quota: 10, Advertise: testserver.AdvertiseIETF}, 600, crossedTargets),
	crossed("x-fixed10-0s-xrl", "the same in X-RateLimit headers",
		testserver.Config{Quota: 10, Advertise: testserver.AdvertiseX}, 600, crossedTargets),
	crossed("x-fixed100-0s-ietf10", "1,000 elements, a fixed window that allows 100 per 1 s and advertises 10 per 1 s in "+
		"IETF draft-8 headers, answering at once; the target is the advertised rate",
		testserver.Config{Quota: 100, Advertise: testserver.AdvertiseIETF, AdvertiseQuota: 10}, 1000,
		[]target{{metric: runRate, limit: 10}}),
	{
		name: "priority-2x", family: "priority",
		about:  "offered 100/s, twice a 50/s quota: 20/s high, 80/s low, `--priority=json:tier --max_wait 5s`",
		server: testserver.Config{Quota: 50}, maxWait: 5 * time.Second,
		rate: 100, highEvery: 5, priorityFlag: "json:tier", modes: []string{"paced"}, targets: priorityTargets,
	},
	{
		name: "priority-2x-off", family: "priority",
		about:  "the same stream without `--priority`, for comparison: every element normal, one queue, oldest first",
		server: testserver.Config{Quota: 50}, maxWait: 5 * time.Second,
		rate: 100, highEvery: 5, modes: []string{"paced"},
		targets: []target{{metric: waste, atMost: true, limit: 0.05}},
	},
}

// selected returns the scenarios named in the comma-separated list only
// (all if it is empty), a family's name standing for all its scenarios in
// order, or an error naming an unknown one.
func selected(only string) ([]scenario, error) {
	if strings.TrimSpace(only) == "" {
		return scenarios, nil
	}
	var out []scenario
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSpace(name)
		if i := indexOf(name); i >= 0 {
			out = append(out, scenarios[i])
			continue
		}
		n := len(out)
		for _, sc := range scenarios {
			if sc.family == name {
				out = append(out, sc)
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("unknown scenario or family %q (have %s)", name, strings.Join(names(), ", "))
		}
	}
	return out, nil
}

func indexOf(name string) int {
	for i, sc := range scenarios {
		if sc.name == name {
			return i
		}
	}
	return -1
}

func names() []string {
	var out []string
	for _, sc := range scenarios {
		out = append(out, sc.name)
	}
	return out
}

// metric names what a target bounds.
type metric int

const (
	utilisation     metric = iota // accepted ÷ what the quota allowed (left), a fraction
	waste                         // backend-rejected ÷ calls, a fraction
	recovery                      // seconds after a change until back at 90 %
	succeeded                     // successes ÷ elements, a fraction
	timeRatio                     // run time ÷ ideal time
	highSucceeded                 // high-tier successes ÷ high elements sent, a fraction
	highP99Ratio                  // the high tier's 99th percentile wait ÷ the low tier's median wait
	delayP99Ratio                 // the 99th percentile of the server's answer times ÷ its latency unloaded
	clientThrottled               // elements the pipeline did not send, a count
	steadyShare                   // accepted per second from the run's 10th second ÷ the quota's rate
	runShare                      // accepted ÷ the time from the first request to the last accepted one, ÷ the quota's rate
	runRate                       // accepted ÷ the time from the first request to the last accepted one, per second
)

// target is one of a scenario's targets: metric at least (or at most)
// limit.
type target struct {
	metric metric
	atMost bool
	limit  float64
}

// String says the target, as "waste ≤ 5 %".
func (t target) String() string {
	op := "≥"
	if t.atMost {
		op = "≤"
	}
	switch t.metric {
	case utilisation:
		return fmt.Sprintf("utilisation %s %s", op, percent(t.limit))
	case waste:
		return fmt.Sprintf("waste %s %s", op, percent(t.limit))
	case recovery:
		return fmt.Sprintf("recovery %s %g s", op, t.limit)
	case succeeded:
		if t.limit == 1 && !t.atMost {
			return "every element succeeds"
		}
		return fmt.Sprintf("successes %s %s", op, percent(t.limit))
	case timeRatio:
		return fmt.Sprintf("time %s %g × ideal", op, t.limit)
	case highSucceeded:
		if t.limit == 1 && !t.atMost {
			return "every high element succeeds"
		}
		return fmt.Sprintf("high successes %s %s", op, percent(t.limit))
	case highP99Ratio:
		if t.limit == 1 {
			return fmt.Sprintf("high p99 wait %s low median wait", op)
		}
		return fmt.Sprintf("high p99 wait %s %g × low median wait", op, t.limit)
	case delayP99Ratio:
		return fmt.Sprintf("p99 answer %s %g × unloaded", op, t.limit)
	case clientThrottled:
		if t.limit == 0 && t.atMost {
			return "nothing client-throttled"
		}
		return fmt.Sprintf("client-throttled %s %g", op, t.limit)
	case steadyShare:
		return fmt.Sprintf("from the 10th s %s %s of the quota", op, percent(t.limit))
	case runShare:
		return fmt.Sprintf("over the run %s %s of the quota", op, percent(t.limit))
	case runRate:
		return fmt.Sprintf("over the run %s %g/s", op, t.limit)
	}
	return "?"
}

// met reports whether value meets the target. NaN (not measured) never
// does.
func (t target) met(value float64) bool {
	if math.IsNaN(value) {
		return false
	}
	if t.atMost {
		return value <= t.limit
	}
	return value >= t.limit
}

// percent formats a fraction as "97 %" or "2.5 %".
func percent(f float64) string {
	return fmt.Sprintf("%s %%", trimFloat(100*f))
}

// trimFloat formats f with at most one decimal, dropping a trailing ".0".
func trimFloat(f float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0")
}
