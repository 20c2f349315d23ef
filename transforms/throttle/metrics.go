package throttle

import "github.com/apache/beam/sdks/v2/go/pkg/beam"

// Namespace is the namespace of the transform's Beam metrics.
const Namespace = "beamthrottle"

// Beam metrics of the transform, visible in the pipeline result and in the
// Dataflow job UI. Every input element ends in exactly one of success
// (accepted), client_throttled, server_throttled, errors or dropped.
var (
	requestsCounter        = beam.NewCounter(Namespace, "requests")         // decisions made, retries included
	acceptedCounter        = beam.NewCounter(Namespace, "accepted")         // calls the backend accepted (= Success elements)
	clientThrottledCounter = beam.NewCounter(Namespace, "client_throttled") // ClientThrottled elements
	serverThrottledCounter = beam.NewCounter(Namespace, "server_throttled") // ServerThrottled elements
	errorsCounter          = beam.NewCounter(Namespace, "errors")           // Errors elements
	retriesCounter         = beam.NewCounter(Namespace, "retries")          // throttled elements kept for another attempt
	droppedCounter         = beam.NewCounter(Namespace, "dropped")          // throttled elements discarded by the Drop strategy
	bufferedCounter        = beam.NewCounter(Namespace, "buffered")
	postponedCounter       = beam.NewCounter(Namespace, "postponed") // elements a firing left in the queue for a later one
	latencyMs              = beam.NewDistribution(Namespace, "call_latency_ms")

	// throttlingMsecs is the counter Beam's Java and Python IOs use to tell
	// Dataflow's autoscaler that time was spent throttled. The transform adds
	// one batch interval for every firing in which an element was throttled
	// or left buffered for a later firing.
	throttlingMsecs = beam.NewCounter("beam-throttling-metrics", "throttling-msecs")
)

// Metric names, for reading the counters back from a pipeline result.
const (
	MetricRequests        = "requests"
	MetricAccepted        = "accepted"
	MetricClientThrottled = "client_throttled"
	MetricServerThrottled = "server_throttled"
	MetricErrors          = "errors"
	MetricRetries         = "retries"
	MetricDropped         = "dropped"
	MetricBuffered        = "buffered"
	MetricPostponed       = "postponed"
	MetricCallLatencyMs   = "call_latency_ms"
)
