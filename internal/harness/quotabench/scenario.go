package quotabench

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// Fault is what goes wrong with the quota's service during a scenario.
type Fault string

// The faults the shared quota must survive.
const (
	NoFault Fault = ""
	// RedisDown kills Redis (its data is lost) and restarts it, empty.
	RedisDown Fault = "redis-down"
	// RateLimitDown kills Envoy's rate-limit service and restarts it.
	RateLimitDown Fault = "ratelimit-down"
	// RateLimitSlow delays every chunk of bytes between the pipelines and
	// the rate-limit service by Settings.SlowDelay, in both directions.
	RateLimitSlow Fault = "ratelimit-slow"
)

// Scenario is one run of the pipeline processes against a fresh quota
// server.
type Scenario struct {
	// Name identifies the scenario on the command line and in the report.
	Name string
	// Title describes it in the report.
	Title string
	// Backend is the pipelines' --quota_backend: none, redis, envoy or,
	// in a strict scenario, local.
	Backend string
	// FailClosed sets --quota_fail=closed (else open, the default).
	FailClosed bool
	// Competitor is the rate of the uncontrolled client, as a fraction of
	// the capacity; 0 for none.
	Competitor float64
	// BatchInterval is the pipelines' --batch_interval; 0 leaves the
	// default (1 s).
	BatchInterval time.Duration
	// Fault is the fault injected, if any, from Settings.FaultAt to
	// Settings.FaultAt + Settings.FaultFor after the pipelines started
	// sending (RateLimitSlow: for the whole run).
	Fault Fault

	// Strict runs the scenario against a strict limiter instead: the quota
	// server is a GCRA at Settings.APIRate with no burst, and the sources
	// emit Settings.StrictElements in all at once (bounded), as a batch job
	// does. The fields above but Backend do not apply.
	Strict bool
	// Processes is how many pipeline processes run; 0 means
	// Settings.Processes. A priority scenario runs one per tier of its
	// Tiers.
	Processes int
	// Share is a strict scenario's quota, all processes together, as a
	// fraction of the API's rate: --quota_rate is Share × APIRate with
	// redis, and Share × APIRate ÷ processes for each process with local.
	// Envoy's is in its configuration (envoyStrictRate).
	Share float64
	// MaxTime is the target of a strict scenario's time ratio; 0 means
	// report only. With a target, waste must be at most MaxWaste too.
	MaxTime float64
	// Nginx runs a strict scenario against Debian's nginx instead of the
	// quota server: limit_req at Settings.APIRate with no burst
	// (services.Nginx), a strict limiter written by others than the
	// client it measures. Its log is the count.
	Nginx bool
	// Elements is how many elements the processes of a strict scenario
	// generate in all, split evenly between them; 0 means
	// Settings.StrictElements.
	Elements int
	// Runs is how many times in a row a scenario runs, each run a result
	// and a row of its own; 0 means once.
	Runs int
	// MaxSpread is the target of a strict scenario's finish spread
	// (Result.FinishSpread); 0 means report only.
	MaxSpread float64

	// Priority runs the scenario as a measure of priority shares across
	// processes: against the strict limiter, as Strict does, a process per
	// tier of Tiers shares a Redis quota of time slots at Share × APIRate
	// on one --quota_key, all its elements of that tier. Each offers the
	// whole quota: a Pub/Sub subscription the harness publishes to at the
	// quota's rate for Settings.Duration (see tierSource). Backend must be
	// redis.
	Priority bool
	// Tiers are the tiers of a priority scenario's processes, in order,
	// each process named after its tier (testserver.ClientHeader); nil
	// means high and low.
	Tiers []string
	// HighShare is the processes' --quota_high_share in a priority
	// scenario; 0 passes none.
	HighShare float64
	// MinHigh is the target of a priority scenario: the least part of its
	// demand the high process must have accepted; 0 means report only.
	MinHigh float64

	// Window runs a strict scenario against a fixed window of
	// WindowQuota requests a minute (windows from the server's start)
	// instead of the GCRA, and Advertise is the family of headers in
	// which its answers advertise what is left of it (none: only
	// Retry-After on its 429s). Backend none: the processes cooperate
	// through the server's count alone.
	Window    bool
	Advertise testserver.Advertise
	// Latency delays each accepted answer of a Window scenario's server
	// (testserver.Config.Latency); RefuseAtOnce answers its 429s at once
	// (testserver.Config.RefuseAtOnce), and NoRetryAfter leaves
	// Retry-After out of them (testserver.Config.NoRetryAfter).
	Latency      time.Duration
	RefuseAtOnce bool
	NoRetryAfter bool

	// Crossed marks the rows of the crossed family (CrossedGroup): Window
	// scenarios that cross latency, the limiter and advertised headers as
	// users meet them. Their targets are AllSucceed, WasteTarget, MaxTime
	// and MinRate.
	Crossed bool
	// AllSucceed is a target: every element of every process succeeds.
	AllSucceed bool
	// WasteTarget is the most waste allowed where a scenario has targets;
	// 0 means MaxWaste.
	WasteTarget float64
	// MinRate is a target of a strict scenario: the least share of the
	// quota's rate its accepted calls reach over the run
	// (Result.RateShare); 0 means none.
	MinRate float64
	// Deadline bounds a run: the processes still going then are killed
	// and the row fails its targets (Result.TimedOut). 0 means the
	// default: for a strict scenario four times its ideal time plus 3
	// minutes.
	Deadline time.Duration
}

// WindowQuota is the quota of a Window scenario's fixed window, a minute
// long: Cloud DLP's default.
const WindowQuota = 600

// fail is the scenario's --quota_fail.
func (s Scenario) fail() string {
	if s.FailClosed {
		return "closed"
	}
	return "open"
}

// maxWaste is the scenario's target of waste: WasteTarget, or MaxWaste.
func (s Scenario) maxWaste() float64 { return cmp.Or(s.WasteTarget, MaxWaste) }

// faulty reports whether the scenario injects a fault; its verdict is then
// conservation, not waste and utilisation.
func (s Scenario) faulty() bool { return s.Fault != NoFault }

// Scenarios are the scenarios of `make quotabench`, in the order they run.
var Scenarios = []Scenario{
	{Name: "none", Title: "adaptive throttle alone", Backend: "none"},
	{Name: "redis", Title: "shared quota, Redis GCRA", Backend: "redis"},
	{Name: "envoy", Title: "shared quota, Envoy's rate-limit service", Backend: "envoy"},
	// Envoy's service counts refused permits, so a window's remainder is lost
	// when a batch asks for more than is left (envoyquota.Quota): smaller
	// batches lose less.
	{Name: "envoy-small-batches", Title: "shared quota, Envoy, --batch_interval=250ms", Backend: "envoy", BatchInterval: 250 * time.Millisecond},
	{Name: "redis-competitor", Title: "Redis quota + adaptive, with a competitor", Backend: "redis", Competitor: 0.3},
	{Name: "envoy-competitor", Title: "Envoy quota + adaptive, with a competitor", Backend: "envoy", Competitor: 0.3},
	{Name: "redis-down-open", Title: "Redis killed and restarted, fail open", Backend: "redis", Fault: RedisDown},
	{Name: "redis-down-closed", Title: "Redis killed and restarted, fail closed", Backend: "redis", Fault: RedisDown, FailClosed: true},
	{Name: "ratelimit-down-open", Title: "rate-limit service killed and restarted, fail open", Backend: "envoy", Fault: RateLimitDown},
	{Name: "ratelimit-down-closed", Title: "rate-limit service killed and restarted, fail closed", Backend: "envoy", Fault: RateLimitDown, FailClosed: true},
	{Name: "ratelimit-slow", Title: "rate-limit service answering 100 ms late, fail open", Backend: "envoy", Fault: RateLimitSlow},

	// Against a strict limiter, a batch job's elements all at once. The
	// quota is set below the API's rate (90 %, 95 %, 100 %) to find how
	// close to it the slots can be spaced before waste rises.
	{Name: "strict-none", Title: "adaptive throttle alone", Backend: "none", Strict: true},
	{Name: "strict-redis", Title: "Redis slots at 90 % of the API's rate", Backend: "redis", Strict: true, Share: 0.9, MaxTime: 1.10},
	{Name: "strict-redis-95", Title: "Redis slots at 95 %", Backend: "redis", Strict: true, Share: 0.95},
	{Name: "strict-redis-100", Title: "Redis slots at 100 %", Backend: "redis", Strict: true, Share: 1},
	{Name: "strict-local", Title: "in-process slots, each process a third of 90 %", Backend: "local", Strict: true, Share: 0.9},
	{Name: "strict-local-one", Title: "one process, in-process slots at 90 %", Backend: "local", Strict: true, Share: 0.9, Processes: 1, MaxTime: 1.08},
	{Name: "strict-envoy", Title: "Envoy's rate-limit service, 9 a second (fixed windows)", Backend: "envoy", Strict: true},

	// Against Debian's nginx (limit_req, no burst) instead of the quota
	// server's GCRA, five runs in a row each: a limiter written next to the
	// client shares its assumptions; nginx does not.
	{Name: "nginx-redis", Title: "nginx limit_req, Redis slots at 90 %, 3 processes × 300", Backend: "redis", Strict: true, Nginx: true,
		Share: 0.9, Elements: 900, Runs: 5, MaxTime: 1.10, MaxSpread: MaxFinishSpread},
	{Name: "nginx-redis-8", Title: "nginx limit_req, Redis slots at 90 %, 8 processes × 100", Backend: "redis", Strict: true, Nginx: true,
		Share: 0.9, Elements: 800, Processes: 8, Runs: 5, MaxTime: 1.10, MaxSpread: MaxFinishSpread},
	{Name: "nginx-none", Title: "nginx limit_req, no shared quota, 3 processes × 300", Backend: "none", Strict: true, Nginx: true,
		Elements: 900},

	// Against a fixed window of 600 a minute that advertises what is left
	// of it on every answer, in each header family the quota server
	// sends, and without the headers as the contrast: eight processes of
	// default flags and no shared quota, 150 elements each (two windows in
	// all).
	{Name: "advertised-ietf", Title: "fixed window 600/min, IETF RateLimit headers, 8 processes × 150", Backend: "none", Strict: true,
		Window: true, Advertise: testserver.AdvertiseIETF, Processes: 8, Elements: 1200, MaxTime: 1.05},
	{Name: "advertised-draft", Title: "the same, draft RateLimit-Limit/-Remaining/-Reset", Backend: "none", Strict: true,
		Window: true, Advertise: testserver.AdvertiseDraft, Processes: 8, Elements: 1200, MaxTime: 1.05},
	{Name: "advertised-x", Title: "the same, X-RateLimit-* with epoch resets", Backend: "none", Strict: true,
		Window: true, Advertise: testserver.AdvertiseX, Processes: 8, Elements: 1200, MaxTime: 1.05},
	{Name: "advertised-openai", Title: "the same, OpenAI's x-ratelimit-*-requests", Backend: "none", Strict: true,
		Window: true, Advertise: testserver.AdvertiseOpenAI, Processes: 8, Elements: 1200, MaxTime: 1.05},
	{Name: "advertised-anthropic", Title: "the same, Anthropic's anthropic-ratelimit-requests-*", Backend: "none", Strict: true,
		Window: true, Advertise: testserver.AdvertiseAnthropic, Processes: 8, Elements: 1200, MaxTime: 1.05},
	{Name: "advertised-none", Title: "the same without the headers (Retry-After on 429s only)", Backend: "none", Strict: true,
		Window: true, Processes: 8, Elements: 1200},

	// The crossed family: the window of the advertised family as LLM APIs
	// are met, answering in seconds and advertising their quota, and a
	// bare one, advertising nothing and without Retry-After; each bounded
	// by a deadline that fails its row.
	{Name: "x-8p-fixed600m-2s-ietf", Title: "fixed window 600/min, 2 s answers, refusals at once, IETF RateLimit headers, 8 processes × 150",
		Backend: "none", Strict: true, Window: true, Crossed: true, Advertise: testserver.AdvertiseIETF, Latency: 2 * time.Second,
		RefuseAtOnce: true, Processes: 8, Elements: 1200, AllSucceed: true, MaxTime: 1.10, Deadline: crossedDeadline},
	{Name: "x-8p-fixed600m-0s-none", Title: "fixed window 600/min answering at once, no headers, no Retry-After, 8 processes × 150",
		Backend: "none", Strict: true, Window: true, Crossed: true, NoRetryAfter: true, RefuseAtOnce: true,
		Processes: 8, Elements: 1200, WasteTarget: 0.05, MinRate: 0.95, Deadline: crossedDeadline},

	// Priority shares across processes: a high and a low process on one
	// Redis quota of slots at 90 % of the strict limiter's rate, each
	// offering the whole quota. With a share s the low process is held to
	// 1 − s of the rate, which leaves the high one s of its demand at most:
	// at 0.9 the target is that bound itself, so 0.95 is measured too. The
	// high process alone shows what one process makes of the slots.
	{Name: "priority-high-alone", Title: "the high process alone, --quota_high_share=0.9", Backend: "redis", Priority: true, Share: 0.9, HighShare: 0.9, Tiers: []string{"high"}},
	{Name: "priority-shares", Title: "high and low process, --quota_high_share=0.9", Backend: "redis", Priority: true, Share: 0.9, HighShare: 0.9, MinHigh: MinHighShare},
	{Name: "priority-shares-95", Title: "high and low process, --quota_high_share=0.95", Backend: "redis", Priority: true, Share: 0.9, HighShare: 0.95, MinHigh: MinHighShare},
	{Name: "priority-no-share", Title: "high and low process, no shares", Backend: "redis", Priority: true, Share: 0.9},
}

// tiers are the tiers of a priority scenario's processes (Scenario.Tiers).
func (s Scenario) tiers() []string {
	if s.Tiers == nil {
		return []string{"high", "low"}
	}
	return s.Tiers
}

// crossedDeadline bounds each crossed run: twice the 120 s its 1,200
// elements take at the window's average rate. A run still going then is
// at 50 % of the quota, far below its targets.
const crossedDeadline = 4 * time.Minute

// StrictGroup, AdvertisedGroup, CrossedGroup, NginxGroup and PriorityGroup
// name every strict scenario against the GCRA, every scenario of the
// advertised family, every scenario of the crossed family, every scenario
// against nginx and every priority scenario at once in Select.
const (
	StrictGroup     = "strict"
	AdvertisedGroup = "advertised"
	CrossedGroup    = "crossed"
	NginxGroup      = "nginx"
	PriorityGroup   = "priority"
)

// Select returns the scenarios named in the comma-separated list names, in
// the order of Scenarios; "" selects them all, StrictGroup ("strict")
// every strict scenario against the quota server's GCRA, AdvertisedGroup
// ("advertised") the advertised family against its window, CrossedGroup
// ("crossed") the crossed family, NginxGroup ("nginx")
// every scenario against nginx and PriorityGroup ("priority")
// every priority scenario.
func Select(names string) ([]Scenario, error) {
	if strings.TrimSpace(names) == "" {
		return Scenarios, nil
	}
	want := map[string]bool{}
	for n := range strings.SplitSeq(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	strict, nginx, priority, adv, crossed := want[StrictGroup], want[NginxGroup], want[PriorityGroup], want[AdvertisedGroup], want[CrossedGroup]
	delete(want, AdvertisedGroup)
	delete(want, CrossedGroup)
	delete(want, StrictGroup)
	delete(want, NginxGroup)
	delete(want, PriorityGroup)
	var out []Scenario
	for _, s := range Scenarios {
		if want[s.Name] || strict && s.Strict && !s.Nginx && !s.Window || nginx && s.Nginx || priority && s.Priority ||
			adv && s.Window && !s.Crossed || crossed && s.Crossed {
			out = append(out, s)
			delete(want, s.Name)
		}
	}
	for n := range want {
		return nil, fmt.Errorf("quotabench: no scenario %q", n)
	}
	return out, nil
}

// Settings are the benchmark's knobs. The zero value of a field means its
// default (see withDefaults).
type Settings struct {
	// Capacity is the quota server's capacity per second (token bucket,
	// one second of burst), and the shared quota: 60.
	Capacity int
	// Processes is how many pipeline processes share the quota: 3.
	Processes int
	// Offer is what each process offers, as a fraction of the capacity:
	// 0.5 (with three processes, 1.5 times the capacity in all).
	Offer float64
	// Duration is how long each process's source emits: 40 s.
	Duration time.Duration
	// FaultDuration is how long the sources emit in fault scenarios: 30 s.
	FaultDuration time.Duration
	// FaultAt and FaultFor place a fault after the pipelines started
	// sending: 10 s and 8 s.
	FaultAt, FaultFor time.Duration
	// SlowDelay is how late the slow rate-limit service answers: 100 ms.
	SlowDelay time.Duration
	// MaxWait is the pipelines' --max_wait: 5 s. Strict scenarios use
	// auto instead: no bound while calls are accepted, for files and
	// --generate.
	MaxWait time.Duration

	// APIRate is the strict limiter's rate per second (GCRA, no burst),
	// in the strict and the priority scenarios: 10.
	APIRate int
	// StrictElements is how many elements the processes of a strict
	// scenario generate in all, split evenly between them: 600 (200 each
	// with three processes).
	StrictElements int
}

func (s Settings) withDefaults() Settings {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if s.Capacity == 0 {
		s.Capacity = 60
	}
	if s.Processes == 0 {
		s.Processes = 3
	}
	if s.Offer == 0 {
		s.Offer = 0.5
	}
	def(&s.Duration, 40*time.Second)
	def(&s.FaultDuration, 30*time.Second)
	def(&s.FaultAt, 10*time.Second)
	def(&s.FaultFor, 8*time.Second)
	def(&s.SlowDelay, 100*time.Millisecond)
	def(&s.MaxWait, 5*time.Second)
	if s.APIRate == 0 {
		s.APIRate = 10
	}
	if s.StrictElements == 0 {
		s.StrictElements = 600
	}
	return s
}

// procs is how many pipeline processes sc runs.
func (s Settings) procs(sc Scenario) int {
	if sc.Priority {
		return len(sc.tiers())
	}
	if sc.Processes > 0 {
		return sc.Processes
	}
	return s.Processes
}

// duration is how long the sources of sc emit.
func (s Settings) duration(sc Scenario) time.Duration {
	if sc.faulty() {
		return s.FaultDuration
	}
	return s.Duration
}

// rate is what one process offers per second, but in strict scenarios,
// whose sources emit all at once.
func (s Settings) rate() float64 { return s.Offer * float64(s.Capacity) }

// elements is how many elements one process generates in sc: rate ×
// duration, rounded up to a whole number of the generator's 100 ms ticks
// so that it emits exactly that many; in a strict scenario, its share of
// StrictElements (or of its own Elements); in a priority scenario, what the source offers it and
// the warm-up before.
func (s Settings) elements(sc Scenario) int {
	if sc.Priority {
		return s.offered(sc) + 1 // and the warm-up
	}
	if sc.Strict && sc.Elements > 0 {
		return sc.Elements / s.procs(sc)
	}
	if sc.Strict {
		return s.StrictElements / s.procs(sc)
	}
	perTick := max(1, int(s.rate()/10+0.5))
	n := int(s.rate()*s.duration(sc).Seconds() + 0.5)
	return (n + perTick - 1) / perTick * perTick
}

// offered is how many elements the source of a priority scenario offers
// each process after its warm-up: the quota's rate × Duration.
func (s Settings) offered(sc Scenario) int {
	return int(s.quotaRate(sc)*s.Duration.Seconds() + 0.5)
}

// envoyStrictRate is the limit per second of the descriptor bench=strict in
// testdata/ratelimit/config/beamthrottle.yaml, which strict-envoy uses: 90 %
// of the default APIRate. Envoy's units are a second, a minute, an hour or
// a day, so the configuration holds it, not a flag.
const envoyStrictRate = 9

// quotaRate is the configured quota of a strict or priority scenario per
// second, all processes together; for no quota, the API's rate. It is the pace the
// time ratio is measured against.
func (s Settings) quotaRate(sc Scenario) float64 {
	if sc.Window {
		return WindowQuota / 60.0
	}
	switch sc.Backend {
	case "none":
		return float64(s.APIRate)
	case "envoy":
		return envoyStrictRate
	}
	return sc.Share * float64(s.APIRate)
}

// rateFlag writes perSecond permits a second as --quota_rate reads it
// (throttle.QuotaConfig.Rate): "9/s", else per minute ("570/m" for 9.5), else
// per hour, rounded.
func rateFlag(perSecond float64) string {
	for _, u := range []struct {
		unit    string
		seconds float64
	}{{"s", 1}, {"m", 60}} {
		n := perSecond * u.seconds
		if n >= 1 && math.Abs(n-math.Round(n)) < 1e-9 {
			return fmt.Sprintf("%d/%s", int64(math.Round(n)), u.unit)
		}
	}
	return fmt.Sprintf("%d/h", max(1, int64(math.Round(perSecond*3600))))
}
