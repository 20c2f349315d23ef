package firing

import "time"

// Strategy is what becomes of an element whose attempt was throttled.
type Strategy int

// The strategies.
const (
	Fail     Strategy = iota // route it to its output
	Drop                     // discard it (errors are still routed)
	Retry                    // try it again, within MaxAttempts and MaxAge
	Postpone                 // try it again, within its bounds of wait
)

// Config is the configuration of firings. Zero durations mean no bound.
type Config struct {
	// BatchInterval is the time between firings of a group whose firing
	// did not postpone, and the shortest wait before a retry (Retry).
	BatchInterval time.Duration
	// Wait is how long a firing goes on deciding: a postponement to a time
	// before start + Wait is waited for inside the firing; one beyond it
	// ends the firing. Zero ends the firing at the first postponement.
	Wait time.Duration
	// MinWait is the shortest wait inside a firing after a postponement.
	MinWait time.Duration
	// Tick is the shortest time from the end of a firing that postponed to
	// the next firing.
	Tick time.Duration
	// BatchSize bounds the live elements of a firing (see Take); zero
	// means no bound.
	BatchSize int
	// CallsInFlight bounds the calls under way at once (at least 1),
	// counting the calls carried from earlier firings (Carry).
	CallsInFlight int
	// SizeCalls sizes the bound on calls under way to what the policy's
	// pace needs at the calls' latency, under CallsInFlight: 1 for a fast
	// API (latency up to 100 ms); one more than the calls under way while
	// the policy would send no more than one cost unit in a latency (a
	// probe after a cut: the policy spaces it, and the calls sent at the
	// pace before do not hold it back); else the cost units it would send
	// in twice the latency. The latency is Env.Latency (else the mean of
	// this firing's answers, else a batch interval), or the age of the
	// oldest call under way if more. Little's law: a rate at a latency
	// needs rate × latency calls under way, and the factor of two covers
	// their spread and a rate that grows. A policy without a pace (Budget
	// -1) gets CallsInFlight.
	SizeCalls bool
	// Detach lets calls outlive the firing that sent them: once nothing is
	// left to decide, the firing waits for answers until its deadline
	// (start + the longer of Wait and BatchInterval) and then ends with
	// calls still under way (Flying),
	// for a later firing to carry and route. Past that deadline, a firing
	// that waits for a slot of CallsInFlight ends too, its elements left
	// queued (see Timer), unless its oldest call under way was sent less
	// than a tenth of a batch interval before (a fast API's). Without Detach, or once interrupted, a
	// firing ends only when every call it sent or carried is answered.
	Detach bool
	// ItemsPerCall and BytesPerCall bound the elements and the payload
	// bytes of one call; ItemsPerCall below 2 and BytesPerCall 0 make
	// every call one element.
	ItemsPerCall, BytesPerCall int
	// CostPerCall charges every call ItemsPerCall elements' worth of one
	// cost unit instead of the sum of its elements' costs.
	CostPerCall bool
	// MaxWait bounds an element's wait from when it joined the queue;
	// MaxStall from the later of that and the last progress (Env.Progress).
	MaxWait, MaxStall time.Duration
	// Strategy is what becomes of a throttled element.
	Strategy Strategy
	// FinalRejects routes an element whose call the policy rejected,
	// whatever the strategy: the simulator's model of per-element
	// throttles, which send or reject and never postpone.
	FinalRejects bool
	// MaxAttempts and MaxAge bound the attempts and the age of an element
	// under Retry.
	MaxAttempts int
	MaxAge      time.Duration
	// Prompt fires a group at once when an element arrives while its queue
	// is empty and no call is under way (see ArmDelay), rather than a batch
	// interval later.
	Prompt bool
}

// ArmDelay is how long after an element arrives at an idle group (its
// queue empty, no call under way, no firing due) the group's next firing
// is due: none with Prompt, else a batch interval, in which a batch
// gathers. A policy that paces spaces the calls itself, and a call of one
// element gains nothing by waiting for others: the wait would only delay
// the first answers, a whole batch interval of an API's quota at the start
// of a run. Calls of several elements, and priorities, need the batch.
func (c *Config) ArmDelay() time.Duration {
	if c.Prompt {
		return 0
	}
	return c.BatchInterval
}

// batching reports whether calls take several elements.
func (c *Config) batching() bool { return c.ItemsPerCall > 1 || c.BytesPerCall > 0 }

// Kind is the outcome of an element.
type Kind int

// The outcomes.
const (
	None            Kind = iota // not routed (an element's Last when never failed)
	Success                     // accepted by the API
	ClientThrottled             // rejected or held back by the client
	ServerThrottled             // the API answered that it throttles
	Error                       // any other failure
	Dropped                     // discarded under Drop
)

// Elem is what a firing knows of an element.
type Elem struct {
	Since     time.Time // when it joined its group's queue; zero if not known
	NotBefore time.Time // not tried again before then
	Attempts  int       // attempts made so far
	First     time.Time // its first attempt; zero if none
	Last      Kind      // why its last attempt failed; None if it did not
	Cost      int       // what a call for it costs, in cost units (at least 1)
	Size      int       // its payload's bytes, for BytesPerCall
	Tier      int       // its priority tier (-1 low, 0 normal, 1 high), for the quota
}
