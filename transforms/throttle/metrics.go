package throttle

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// namespace is the namespace of the transform's Beam metrics.
const namespace = "beamthrottle"

// Metric names of the transform's Beam metrics (in namespace), visible in
// the pipeline result and in the Dataflow job UI, for reading them back;
// the package doc lists them for users (TestMetricNamesDocumented).
// Every input element ends in exactly one of metricAccepted,
// metricCacheHits, metricClientThrottled, metricServerThrottled,
// metricErrors or metricDropped.
const (
	metricRequests        = "requests"         // decisions made, retries included
	metricAccepted        = "accepted"         // calls the backend accepted (= Success elements)
	metricClientThrottled = "client_throttled" // ClientThrottled elements
	metricServerThrottled = "server_throttled" // ServerThrottled elements
	metricErrors          = "errors"           // Errors elements
	metricRetries         = "retries"          // throttled elements kept for another attempt
	metricDropped         = "dropped"          // throttled elements discarded by the Drop strategy
	metricBuffered        = "buffered"         // elements that reached a group's buffer
	metricPostponed       = "postponed"        // elements a firing left in the queue for a later one
	metricCallLatencyMs   = "call_latency_ms"  // a distribution: the caller's latency per call
	metricCalls           = "calls"            // calls made (Call, or CallBatch for several elements)
	metricCost            = "cost"             // cost units of the calls made (WithCost; 1 per element by default)
	// metricInterrupted counts the elements routed without a call because
	// the pipeline was interrupted (see pipeline.Run); they are counted in
	// metricClientThrottled, metricServerThrottled or metricDropped too.
	metricInterrupted = "interrupted"
	// metricRecalled counts the elements called again because the worker
	// that had their call under way was gone when their group next fired
	// (a restart, or the group moved to another worker): the transform
	// calls at least once, and these are the repeats it knows of.
	metricRecalled = "recalled"
	// metricOrphaned counts the calls answered on a worker that no firing
	// collected: their bundle failed after making them, and the retry
	// called its elements again.
	metricOrphaned = "orphaned"
	// With WithCache: elements answered from the response cache (they go
	// to Success without a call, and count in none of the above), elements
	// the cache did not hold, and reads and writes of the cache that failed
	// (the element was called for instead).
	metricCacheHits   = "cache_hits"
	metricCacheMisses = "cache_misses"
	metricCacheErrors = "cache_errors"
	// With WithPriority, per tier: elements that ended in Success (cache
	// hits included), elements that ended otherwise (a throttled or error
	// output, or discarded by Drop), elements a firing left in the queue,
	// and a distribution of how long the elements waited in their group's
	// buffer, from arriving to ending, in milliseconds.
	metricHighAccepted       = "high_accepted"
	metricHighDeadLettered   = "high_dead_lettered"
	metricHighPostponed      = "high_postponed"
	metricHighWaitMs         = "high_wait_ms"
	metricNormalAccepted     = "normal_accepted"
	metricNormalDeadLettered = "normal_dead_lettered"
	metricNormalPostponed    = "normal_postponed"
	metricNormalWaitMs       = "normal_wait_ms"
	metricLowAccepted        = "low_accepted"
	metricLowDeadLettered    = "low_dead_lettered"
	metricLowPostponed       = "low_postponed"
	metricLowWaitMs          = "low_wait_ms"
)

// The transform's Beam metrics, one for each name above.
var (
	requestsCounter        = beam.NewCounter(namespace, metricRequests)
	acceptedCounter        = beam.NewCounter(namespace, metricAccepted)
	clientThrottledCounter = beam.NewCounter(namespace, metricClientThrottled)
	serverThrottledCounter = beam.NewCounter(namespace, metricServerThrottled)
	errorsCounter          = beam.NewCounter(namespace, metricErrors)
	retriesCounter         = beam.NewCounter(namespace, metricRetries)
	droppedCounter         = beam.NewCounter(namespace, metricDropped)
	bufferedCounter        = beam.NewCounter(namespace, metricBuffered)
	postponedCounter       = beam.NewCounter(namespace, metricPostponed)
	latencyMs              = beam.NewDistribution(namespace, metricCallLatencyMs)
	callsCounter           = beam.NewCounter(namespace, metricCalls)
	costCounter            = beam.NewCounter(namespace, metricCost)
	interruptedCounter     = beam.NewCounter(namespace, metricInterrupted)
	recalledCounter        = beam.NewCounter(namespace, metricRecalled)
	orphanedCounter        = beam.NewCounter(namespace, metricOrphaned)
	cacheHitsCounter       = beam.NewCounter(namespace, metricCacheHits)
	cacheMissesCounter     = beam.NewCounter(namespace, metricCacheMisses)
	cacheErrorsCounter     = beam.NewCounter(namespace, metricCacheErrors)

	// tierMetrics are the metrics of each priority tier, lowest first.
	tierMetrics = [3]tierMetric{
		newTierMetric(metricLowAccepted, metricLowDeadLettered, metricLowPostponed, metricLowWaitMs),
		newTierMetric(metricNormalAccepted, metricNormalDeadLettered, metricNormalPostponed, metricNormalWaitMs),
		newTierMetric(metricHighAccepted, metricHighDeadLettered, metricHighPostponed, metricHighWaitMs),
	}

	// throttlingMsecs is the counter Beam's Java and Python IOs use to tell
	// Dataflow's autoscaler that time was spent throttled. The transform adds
	// one batch interval for every firing in which an element was throttled
	// or left buffered for a later firing.
	throttlingMsecs = beam.NewCounter("beam-throttling-metrics", "throttling-msecs")
)

// tierMetric holds the metrics of one priority tier.
type tierMetric struct {
	accepted, deadLettered, postponed beam.Counter
	waitMs                            beam.Distribution
}

func newTierMetric(accepted, deadLettered, postponed, waitMs string) tierMetric {
	return tierMetric{
		accepted:     beam.NewCounter(namespace, accepted),
		deadLettered: beam.NewCounter(namespace, deadLettered),
		postponed:    beam.NewCounter(namespace, postponed),
		waitMs:       beam.NewDistribution(namespace, waitMs),
	}
}

// tierTally counts one firing's outcomes for one priority tier.
type tierTally struct {
	accepted, deadLettered, postponed int64
	waitMs                            []int64
}

// ended counts, with WithPriority, an element of the tier of it that ended
// at now, accepted or not.
func (fr *driver) ended(it *item, now time.Time, accepted bool) {
	if !fr.fn.Priorities {
		return
	}
	tt := &fr.t.tiers[tierOf(it.Tier)-tierLow]
	if accepted {
		tt.accepted++
	} else {
		tt.deadLettered++
	}
	if it.Since != 0 {
		tt.waitMs = append(tt.waitMs, max(now.UnixNano()-it.Since, 0)/int64(time.Millisecond))
	}
}

// reportTiers adds t's per-tier counts to the Beam metrics (all of them,
// zeros included, when touch).
func (t *tally) reportTiers(ctx context.Context, touch bool) {
	for i, tt := range t.tiers {
		m := tierMetrics[i]
		for _, c := range []struct {
			c beam.Counter
			n int64
		}{{m.accepted, tt.accepted}, {m.deadLettered, tt.deadLettered}, {m.postponed, tt.postponed}} {
			if c.n != 0 || touch {
				c.c.Inc(ctx, c.n)
			}
		}
		for _, w := range tt.waitMs {
			m.waitMs.Update(ctx, w)
		}
	}
}
