package quotabench

import (
	"fmt"
	"strings"
	"time"
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
	// Backend is the pipelines' --quota_backend: none, redis or envoy.
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
}

// fail is the scenario's --quota_fail.
func (s Scenario) fail() string {
	if s.FailClosed {
		return "closed"
	}
	return "open"
}

// faulty reports whether the scenario injects a fault; its verdict is then
// conservation, not waste and utilisation.
func (s Scenario) faulty() bool { return s.Fault != NoFault }

// Scenarios are the scenarios of `make quotabench`, in the order they run.
var Scenarios = []Scenario{
	{Name: "none", Title: "adaptive throttle alone", Backend: "none"},
	{Name: "redis", Title: "shared quota, Redis GCRA", Backend: "redis"},
	{Name: "envoy", Title: "shared quota, Envoy's rate-limit service", Backend: "envoy"},
	// Envoy's service counts refused permits, so a window's remainder is lost
	// when a batch asks for more than is left (sharedquota.Envoy): smaller
	// batches lose less.
	{Name: "envoy-small-batches", Title: "shared quota, Envoy, --batch_interval=250ms", Backend: "envoy", BatchInterval: 250 * time.Millisecond},
	{Name: "redis-competitor", Title: "Redis quota + adaptive, with a competitor", Backend: "redis", Competitor: 0.3},
	{Name: "envoy-competitor", Title: "Envoy quota + adaptive, with a competitor", Backend: "envoy", Competitor: 0.3},
	{Name: "redis-down-open", Title: "Redis killed and restarted, fail open", Backend: "redis", Fault: RedisDown},
	{Name: "redis-down-closed", Title: "Redis killed and restarted, fail closed", Backend: "redis", Fault: RedisDown, FailClosed: true},
	{Name: "ratelimit-down-open", Title: "rate-limit service killed and restarted, fail open", Backend: "envoy", Fault: RateLimitDown},
	{Name: "ratelimit-down-closed", Title: "rate-limit service killed and restarted, fail closed", Backend: "envoy", Fault: RateLimitDown, FailClosed: true},
	{Name: "ratelimit-slow", Title: "rate-limit service answering 100 ms late, fail open", Backend: "envoy", Fault: RateLimitSlow},
}

// Select returns the scenarios named in the comma-separated list names, in
// the order of Scenarios; "" selects them all.
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
	var out []Scenario
	for _, s := range Scenarios {
		if want[s.Name] {
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
	// MaxWait is the pipelines' --max_wait: 5 s.
	MaxWait time.Duration
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
	return s
}

// duration is how long the sources of sc emit.
func (s Settings) duration(sc Scenario) time.Duration {
	if sc.faulty() {
		return s.FaultDuration
	}
	return s.Duration
}

// rate is what one process offers per second.
func (s Settings) rate() float64 { return s.Offer * float64(s.Capacity) }

// elements is how many elements one process generates in sc: rate ×
// duration, rounded up to a whole number of the generator's 100 ms ticks
// so that it emits exactly that many.
func (s Settings) elements(sc Scenario) int {
	perTick := max(1, int(s.rate()/10+0.5))
	n := int(s.rate()*s.duration(sc).Seconds() + 0.5)
	return (n + perTick - 1) / perTick * perTick
}
