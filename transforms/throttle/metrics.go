package throttle

import "github.com/apache/beam/sdks/v2/go/pkg/beam"

// Namespace is the namespace of the transform's Beam metrics.
const Namespace = "beamthrottle"

// Metric names of the transform's Beam metrics (in Namespace), visible in
// the pipeline result and in the Dataflow job UI, for reading them back.
// Every input element ends in exactly one of MetricAccepted,
// MetricClientThrottled, MetricServerThrottled, MetricErrors or
// MetricDropped.
const (
	MetricRequests        = "requests"         // decisions made, retries included
	MetricAccepted        = "accepted"         // calls the backend accepted (= Success elements)
	MetricClientThrottled = "client_throttled" // ClientThrottled elements
	MetricServerThrottled = "server_throttled" // ServerThrottled elements
	MetricErrors          = "errors"           // Errors elements
	MetricRetries         = "retries"          // throttled elements kept for another attempt
	MetricDropped         = "dropped"          // throttled elements discarded by the Drop strategy
	MetricBuffered        = "buffered"         // elements that reached a group's buffer
	MetricPostponed       = "postponed"        // elements a firing left in the queue for a later one
	MetricCallLatencyMs   = "call_latency_ms"  // a distribution: the caller's latency per call
	MetricCalls           = "calls"            // calls made (Call, or CallBatch for several elements)
	MetricCost            = "cost"             // cost units of the calls made (WithCost; 1 per element by default)
	// MetricInterrupted counts the elements routed without a call because
	// the pipeline was interrupted (see pipeline.Run); they are counted in
	// MetricClientThrottled, MetricServerThrottled or MetricDropped too.
	MetricInterrupted = "interrupted"
)

// The transform's Beam metrics, one for each name above.
var (
	requestsCounter        = beam.NewCounter(Namespace, MetricRequests)
	acceptedCounter        = beam.NewCounter(Namespace, MetricAccepted)
	clientThrottledCounter = beam.NewCounter(Namespace, MetricClientThrottled)
	serverThrottledCounter = beam.NewCounter(Namespace, MetricServerThrottled)
	errorsCounter          = beam.NewCounter(Namespace, MetricErrors)
	retriesCounter         = beam.NewCounter(Namespace, MetricRetries)
	droppedCounter         = beam.NewCounter(Namespace, MetricDropped)
	bufferedCounter        = beam.NewCounter(Namespace, MetricBuffered)
	postponedCounter       = beam.NewCounter(Namespace, MetricPostponed)
	latencyMs              = beam.NewDistribution(Namespace, MetricCallLatencyMs)
	callsCounter           = beam.NewCounter(Namespace, MetricCalls)
	costCounter            = beam.NewCounter(Namespace, MetricCost)
	interruptedCounter     = beam.NewCounter(Namespace, MetricInterrupted)

	// throttlingMsecs is the counter Beam's Java and Python IOs use to tell
	// Dataflow's autoscaler that time was spent throttled. The transform adds
	// one batch interval for every firing in which an element was throttled
	// or left buffered for a later firing.
	throttlingMsecs = beam.NewCounter("beam-throttling-metrics", "throttling-msecs")
)
