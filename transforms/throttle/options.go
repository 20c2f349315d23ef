package throttle

import (
	"fmt"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Strategy says what happens to an element that was throttled, by the
// client or by the server.
type Strategy string

// The throttling strategies (the original Java tool's DLQ, DROP and RETRY).
const (
	// Route sends throttled elements to the ClientThrottled or
	// ServerThrottled output. The default.
	Route Strategy = "route"
	// Drop discards throttled elements; they are only counted in the
	// "dropped" metric.
	Drop Strategy = "drop"
	// Retry keeps a throttled element buffered and tries it again on a later
	// batch, no sooner than the server's Retry-After, for at most
	// MaxAttempts attempts and MaxAge since its first attempt; then it is
	// routed to its throttled output with its attempt count. Unlike the
	// original tool's RETRY, it is bounded.
	Retry Strategy = "retry"
	// Postpone keeps an element the throttle does not send now in its
	// group's queue for a later firing (a postponement, not a rejection),
	// and so does an answer 429 (no sooner than its Retry-After). An element
	// goes to ClientThrottled, or to ServerThrottled if its last attempt was
	// answered 429, only when a bound says so: it waited longer than
	// MaxWait, or than MaxStall without progress, or it arrived at a group
	// holding MaxBuffered elements. In SRE
	// mode a draw r < p postpones the element by one batch interval instead
	// of rejecting it. MaxAttempts and MaxAge do not apply.
	Postpone Strategy = "postpone"
)

// parseStrategy parses a Strategy, or one of the original tool's names
// (see WithStrategy). "" is the mode's default, which resolved fills in.
func parseStrategy(s Strategy) (Strategy, error) {
	switch s {
	case "":
		return "", nil
	case "route", "dlq", "DLQ":
		return Route, nil
	case "drop", "DROP":
		return Drop, nil
	case "retry", "RETRY":
		return Retry, nil
	case "postpone", "POSTPONE":
		return Postpone, nil
	}
	return s, &OptionError{Option: "WithStrategy", Err: fmt.Errorf("unknown strategy %q (want route, drop, retry or postpone)", s)}
}

// Scope says which groups share one throttling policy.
type Scope string

// The scopes.
const (
	// ScopeWorker gives every group of the transform on a worker (one
	// process: a Dataflow or portable-runner SDK harness, or the process
	// running Prism) one policy, which they use together: the worker's
	// sends are paced as one stream, a 429 slows all its groups, and the
	// groups share the slots evenly. The policy lives in the worker's
	// memory, not in Beam state; a restarted worker starts it afresh. The
	// default in ModePaced.
	ScopeWorker Scope = "worker"
	// ScopeGroup gives each group its own policy, kept in the group's Beam
	// state between firings, so it follows the group from worker to
	// worker. Each group decides from what it saw alone. The default in
	// ModeSRE, as in the original tool.
	ScopeGroup Scope = "group"
)

// checkScope reports whether s is a Scope, or "", the mode's default,
// which resolved fills in.
func checkScope(s Scope) error {
	switch s {
	case "", ScopeWorker, ScopeGroup:
		return nil
	}
	return &OptionError{Option: "WithScope", Err: fmt.Errorf("unknown scope %q (want worker or group)", s)}
}

// Mode selects the throttle algorithm (WithMode).
type Mode string

// The modes.
const (
	// ModePaced, the default, paces: a pacer (adaptive.Pacer) spaces the
	// calls at a rate that follows the backend's answers and postpones the
	// others to their slot; it never rejects locally.
	ModePaced Mode = "paced"
	// ModeSRE is the original tool's throttle (adaptive.SRE): before each
	// call it rejects at random with the SRE book's probability
	// max(0, (requests − K·accepts) / (requests + 1)), so that under
	// sustained overload about K times what the backend accepts is sent.
	ModeSRE Mode = "sre"
)

// Option configures Adaptive. Each option sets its own settings and no
// other, so the order of the options does not matter, except that a later
// option of the same name overrides an earlier one.
type Option func(*config)

// WithScope sets which groups share one throttling policy (see Scope). The
// default, "", is ScopeWorker in ModePaced and ScopeGroup in ModeSRE.
func WithScope(sc Scope) Option { return func(c *config) { c.Scope = sc } }

// WithGroups sets how many throttle groups elements are spread over at
// random (default 1). Each group has its own throttle state and buffer, and
// groups are processed in parallel by the runner. Ignored with WithKeyFunc.
func WithGroups(n int) Option { return func(c *config) { c.Groups = n } }

// WithBatchSize sets the maximum number of elements one group processes per
// batch interval (default 100).
func WithBatchSize(n int) Option { return func(c *config) { c.BatchSize = n } }

// WithBatchInterval sets how often a group with buffered elements processes a
// batch (default 1s). The throughput ceiling of one group is batch size /
// batch interval calls per second (with one call in flight and a fast
// backend), and that of the transform is the number of groups times that.
// An element that arrives at an idle group (nothing buffered, no call
// under way) starts its first batch one interval later, so that a batch
// gathers; in ModePaced with calls of one element and no WithPriority the
// batch starts at once instead, since the pacer spaces the calls itself.
func WithBatchInterval(d time.Duration) Option { return func(c *config) { c.BatchInterval = d } }

// WithSRE configures the SRE throttle of ModeSRE: its multiplier K, its
// window (fixed windows of ResetInterval, the default, or a sliding window
// of WindowSize in buckets of Bucket) and whether failures that are not
// overload count as rejects; zero fields mean the defaults that
// adaptive.SREConfig documents. ModePaced does not use it.
//
//	throttle.WithSRE(adaptive.SREConfig{K: 1.5, Sliding: true})
func WithSRE(cfg adaptive.SREConfig) Option { return func(c *config) { c.Adaptive = cfg } }

// WithMode selects the throttle algorithm: ModePaced (the default: a pacer
// that spaces calls at the rate the backend accepts and postpones the rest)
// or ModeSRE (the original tool's SRE formula, which rejects at random),
// in any case; "" is the default. See docs/sim/results.md for how they
// compare.
func WithMode(m Mode) Option { return func(c *config) { c.Mode = m } }

// WithKeyFunc replaces the random group key with one computed from the
// element, so throttle state follows a shard, tenant or endpoint. E is the
// input element type (Message for Message inputs); TryAdaptive refuses a
// key function of another type than the input's. k's type must be
// registered with beam.RegisterType and configured by exported fields, not
// a closure, as it is serialised to the workers:
//
//	throttle.WithKeyFunc(TenantKey{}) // TenantKey has Key(Order) string
//
// A panicking key function sends the element to Errors with its payload.
func WithKeyFunc[E any](k interface{ Key(elem E) string }) Option {
	return func(c *config) { c.KeyFunc = newHook[E](k) }
}

// WithCache answers repeated requests from a response cache: an element
// whose request succeeded within the last ttl goes to Success with that
// response, and spends no call, no quota and no slot. Only successes are
// cached. redisAddr is a Redis (Memorystore) host:port, shared by every
// worker and job that uses it; empty means an in-process LRU on each worker
// (of up to 100,000 responses). A ttl of 0 keeps responses until they are
// evicted.
//
// The cache key is a hash of the caller's type and configuration and of
// the request's payload (a Message's Data), or WithCacheKey's. Elements with
// the same key go to the same group (unless WithKeyFunc sets the groups), and
// a firing calls for one of them at a time, so that one call answers them
// all. A cache that fails or is slow (over 100 ms) is skipped: the call is
// made, and the fault counted (cache_errors) and logged.
func WithCache(redisAddr string, ttl time.Duration) Option {
	return func(c *config) { c.Cache, c.CacheAddr, c.CacheTTL = true, redisAddr, ttl }
}

// WithCacheKey replaces the payload's hash as WithCache's key with one
// computed from the element, such as the field of a request that determines
// its response. E is the input element type (Message for Message inputs); k's
// type must be registered with beam.RegisterType and configured by exported
// fields, as for WithKeyFunc. A panicking key function sends the element to
// Errors with its payload. WithCacheKey has no effect without WithCache.
func WithCacheKey[E any](k interface{ CacheKey(elem E) string }) Option {
	return func(c *config) { c.CacheKey = newHook[E](k) }
}

// WithPriority gives each element one of three priority tiers, computed from
// the element by k: high (k returns more than 0: live traffic), normal (0,
// and every element without WithPriority) or low (less than 0: backfills,
// reprocessing). Three are enough to keep a live feed ahead of a backfill
// on one API key, with a normal tier between them for what is neither.
//
// A firing takes the highest tier first and, within a tier, the oldest
// first, among the first stored batches of its group's queue (up to 256
// batches), so what the policy postpones and what waits past WithMaxWait is
// of the lowest tiers. A full buffer (WithMaxBuffered) sheds the lowest
// tier first: queued elements of a lower tier make room for arriving ones
// of a higher tier. With a shared quota, QuotaConfig's HighShare and
// NormalShare keep shares of the quota for the higher tiers across workers
// and jobs; the per-tier metrics are listed in the package doc.
//
// E is the input element type (Message for Message inputs); k's type must
// be registered with beam.RegisterType and configured by exported fields,
// as for WithKeyFunc. A panicking priority function sends the element to
// Errors with its payload.
func WithPriority[E any](k interface{ Priority(elem E) int }) Option {
	return func(c *config) { c.Priority = newHook[E](k) }
}

// WithStrategy sets what happens to throttled elements (default: Postpone in
// ModePaced, Route in ModeSRE). It also takes the original tool's names:
// "dlq" or "DLQ" for Route, "DROP", "RETRY" and "POSTPONE".
func WithStrategy(s Strategy) Option { return func(c *config) { c.Strategy = s } }

// WithMaxAttempts bounds the Retry strategy: an element is decided on at most
// n times (default 3).
func WithMaxAttempts(n int) Option { return func(c *config) { c.MaxAttempts = n } }

// WithMaxAge bounds the Retry strategy: an element is not retried once this
// long has passed since its first attempt (default 10 minutes).
func WithMaxAge(d time.Duration) Option { return func(c *config) { c.MaxAge = d } }

// WithCallTimeout sets the per-call timeout (default 2m, above the tail of
// a slow API's latency). A call that has
// not returned by then is abandoned and its element goes to Errors; the
// caller's goroutine is left to finish on its own, so callers should honour
// their context.
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.CallTimeout = d } }

// WithCallsInFlight sets how many calls one group may have under way at
// once. The default, 0, sizes it in the paced mode to what the group's
// pace needs at the calls' measured latency (twice the rate × the latency,
// so a 2 s API paced at 20 calls a second gets about 80), and keeps one
// call at a time for an API that answers within 100 ms. The groups'
// calls under way on a worker are then bound together, up to 256, by an
// adaptive.Ceiling: a server that queues instead of refusing makes every
// answer slower, and the bound shrinks until the answers come at their
// usual latency again. The SRE mode has no pace to size it by, and 0
// means 1 there. n ≥ 1 fixes it at n per group, with no ceiling. A call may outlive the firing that made it: a later firing routes
// its answer. Callers must be safe for concurrent use unless it is 1.
func WithCallsInFlight(n int) Option { return func(c *config) { c.CallsInFlight = n } }

// WithClassifier overrides clientcall.Classify. k's type must be registered
// (beam.RegisterType), as clientcall.StatusClassifier is.
//
// Whatever the classifier, a call whose connection could not be made (a
// failed dial: connection refused, no route, no such host) slows the
// policy down as a 429 does, and its element is kept, under Retry and
// Postpone, as a throttled one is; it goes to Errors, with the connection
// error, when the strategy gives up on it (at once under Route and Drop).
func WithClassifier(k clientcall.Classifier) Option { return func(c *config) { c.Classifier = k } }

// WithSeed fixes the random source of the keying and of the throttle
// decisions, for reproducible tests. By default the source is seeded
// randomly.
func WithSeed(seed uint64) Option {
	return func(c *config) {
		c.Seed = seed
		c.HasSeed = true
	}
}

// WithMaxPayloadBytes routes elements whose payload (the bytes of a []byte
// or string element, the JSON of any other) is larger than n bytes to Errors
// without calling the caller. 0, the default, means no limit.
func WithMaxPayloadBytes(n int) Option { return func(c *config) { c.MaxPayload = n } }

// WithMaxBuffered bounds how many elements one group keeps buffered: an
// element arriving at a full buffer goes to ClientThrottled at once (or is
// dropped, under the Drop strategy) with the error "Throttled by Client.
// Group buffer full (n elements)" (load
// shedding, so a backlog cannot grow without bound when the API stays
// slower than the input). 0, the default, means no bound: the backlog lives
// in runner state (persisted by Dataflow; in memory on Prism).
func WithMaxBuffered(n int) Option { return func(c *config) { c.MaxBuffered = n } }

// WithMaxWait bounds how long an element may wait in its group's queue,
// from when it joined it (the worker's clock, corrected by the runner's
// clock skew), before it goes to ClientThrottled (or is dropped, under the
// Drop strategy), or to ServerThrottled if its last attempt was answered
// 429. 0, the default, means no bound, which suits bounded inputs: every
// element is tried and the job takes as long as the quota needs. Set it for
// streaming inputs, to bound latency and the backlog.
//
// An element that cannot be sent before its bound (this one or
// WithMaxStall's) runs out is routed at once rather than when it runs out:
// one answered 429 with a Retry-After beyond it, or one the policy holds
// past it (every call waits for such a Retry-After).
func WithMaxWait(d time.Duration) Option { return func(c *config) { c.MaxWait = d } }

// WithMaxStall bounds how long an element waits while the transform makes
// no progress: it goes where WithMaxWait would send it once it has waited d
// since the later of when it joined its group's queue and when a call of
// the transform's groups on its worker was last accepted (or a group first
// fired on that worker). A job whose calls keep being accepted is never cut
// short, however slow the quota; a job against an API that accepts nothing
// (it answers 429 to everything, or cannot be reached) ends about d after
// its last success. 0, the default, means no bound. Set it for bounded
// inputs; with WithMaxWait, each element goes at the first bound it
// reaches.
func WithMaxStall(d time.Duration) Option { return func(c *config) { c.MaxStall = d } }

// maxItemsPerCall bounds WithItemsPerCall.
const maxItemsPerCall = 100_000

// WithItemsPerCall packs up to n elements of a group into one call of the
// caller's CallBatch (clientcall.BatchCaller), for APIs that take several
// items per request (DLP, Translation, embeddings). 1, the default, calls
// Call once per element. With n > 1 the caller must implement
// clientcall.BatchCaller for the same request and response types; outcomes
// are still routed per element (see clientcall.BatchCaller for partial
// failures). A call takes the oldest elements of a firing in order, so
// WithBatchSize should be at least n. n must be at most 100,000.
func WithItemsPerCall(n int) Option { return func(c *config) { c.ItemsPerCall = n } }

// WithBytesPerCall bounds the payload bytes of one batched call: a call
// takes elements while their payloads add up to at most n bytes (an element
// larger than n on its own is sent alone). 0, the default, means no bound.
// Like WithItemsPerCall, it needs a caller implementing
// clientcall.BatchCaller.
func WithBytesPerCall(n int) Option { return func(c *config) { c.BytesPerCall = n } }

// WithCost charges each element a cost (tokens, bytes, items) instead of
// one unit: the pacer paces cost units per second and the shared quota
// (WithQuota) is taken in cost units (Redis's AllowAtMost, Envoy's hits_addend),
// so a quota stated in tokens per minute holds whatever the elements' sizes.
// A batched call costs the sum of its elements. E is the input element type
// (Message for Message inputs), as for WithKeyFunc, and k's type must be
// registered in the same way. Costs below 1 are charged as 1; an error, a
// negative cost or a panic sends the element to Errors with its payload. By
// default every element costs 1; WithByteCost and WithCallCost are the
// other built-in costs. The SRE mode counts calls and ignores costs.
func WithCost[E any](k interface {
	Cost(elem E) (int, error)
}) Option {
	return func(c *config) { c.Cost, c.CostBy = newHook[E](k), costFunc }
}

// WithByteCost charges each element the size of its payload in bytes (the
// bytes of a []byte or string element, the Data of a Message, the JSON of
// any other), for APIs whose quota counts bytes. It replaces WithCost.
func WithByteCost() Option { return func(c *config) { c.Cost, c.CostBy = hook{}, costBytes } }

// WithCallCost charges each call one unit however many elements it takes,
// for quotas counted in requests when calls are batched (WithItemsPerCall).
// It replaces WithCost.
func WithCallCost() Option { return func(c *config) { c.Cost, c.CostBy = hook{}, costCall } }

// batching reports whether calls take several elements (CallBatch).
func (c config) batching() bool { return c.ItemsPerCall > 1 || c.BytesPerCall > 0 }
