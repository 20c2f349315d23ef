package pipeline

import (
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Summary is the count of elements per outcome of one run, read from the
// throttle's Beam metrics.
type Summary struct {
	Success, ClientThrottled, ServerThrottled, Errors, Dropped int64
	// Requests counts throttle decisions (retries included); Retries the
	// elements kept for another attempt.
	Requests, Retries int64
	// Parked counts reprocessed messages that reached --max_total_attempts.
	Parked int64
	// Reprocessed counts the dead-letter messages a reprocessing run read,
	// each once (re-reads apart, see Reread).
	Reprocessed int64
	// Reread counts the messages a reprocessing run read again after
	// dead-lettering them itself (its subscription is on its own
	// dead-letter topic). Each such message is counted once, under the
	// outcome of its last pass: its earlier passes' outcomes (throttled,
	// or errors with --dead_letter_errors) are left out of the other
	// fields, though their lines are in the output files.
	Reread int64
	// Generated counts the elements the built-in generators emitted.
	Generated int64
	// Buffered counts the elements that reached a throttle group's buffer.
	Buffered int64
	// DeadLetterRejected counts the messages Pub/Sub refused (too large,
	// ...). A refused dead letter's element is written to the errors files
	// only, and counted in Errors, not in the output it came from; a
	// refused --success_topic or --parked_topic message is written to the
	// errors files too, and stays counted as a success or parked.
	DeadLetterRejected int64
	// Interrupted counts the elements routed without a call because the
	// run was interrupted (see Run); they are counted in ClientThrottled,
	// ServerThrottled or Dropped too.
	Interrupted int64
	// CacheHits counts the successes answered from the response cache
	// (--cache) without a call; they are counted in Success too.
	CacheHits int64
}

// Total is the number of elements accounted for: every input element is in
// exactly one of the outcomes.
func (s Summary) Total() int64 {
	return s.Success + s.ClientThrottled + s.ServerThrottled + s.Errors + s.Dropped + s.Parked
}

// SummaryFrom reads a run's Summary from its pipeline result.
func SummaryFrom(res beam.PipelineResult) Summary {
	var s Summary
	if res == nil {
		return s
	}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		var dst *int64
		sign := int64(1)
		switch c.Key.Namespace {
		case "beamthrottle": // the transform's counters, by the names its package doc lists
			switch c.Key.Name {
			case "accepted":
				dst = &s.Success
			case "cache_hits":
				s.Success += c.Result()
				dst = &s.CacheHits
			case "client_throttled":
				dst = &s.ClientThrottled
			case "server_throttled":
				dst = &s.ServerThrottled
			case "errors":
				dst = &s.Errors
			case "dropped":
				dst = &s.Dropped
			case "requests":
				dst = &s.Requests
			case "retries":
				dst = &s.Retries
			case "buffered":
				dst = &s.Buffered
			case "interrupted":
				dst = &s.Interrupted
			}
		case metricsNamespace:
			switch c.Key.Name {
			case OutParked:
				dst = &s.Parked
			case metricReprocessed:
				dst = &s.Reprocessed
			case metricDeadLetterRejected:
				dst = &s.DeadLetterRejected
			case metricGenerated:
				dst = &s.Generated
			case metricMalformed, metricBadInput:
				dst = &s.Errors // malformed dead-letter messages and bad payloads are errors
			case rereadPrefix + OutClientThrottled:
				dst, sign = &s.ClientThrottled, -1
			case rereadPrefix + OutServerThrottled:
				dst, sign = &s.ServerThrottled, -1
			case rereadPrefix + OutErrors:
				dst, sign = &s.Errors, -1
			case refusedPrefix + OutClientThrottled: // dead-lettered as errors
				dst, sign = &s.ClientThrottled, -1
				s.Errors += c.Result()
			case refusedPrefix + OutServerThrottled:
				dst, sign = &s.ServerThrottled, -1
				s.Errors += c.Result()
			}
			if strings.HasPrefix(c.Key.Name, rereadPrefix) {
				s.Reread += c.Result()
			}
		}
		if dst != nil {
			*dst += sign * c.Result()
		}
	}
	return s
}

// metricsNamespace is the namespace of the pipeline's own counters.
const metricsNamespace = "beamthrottle.pipeline"

// Names of the pipeline's own counters, besides OutParked and the reread
// counters (rereadPrefix).
const (
	metricReprocessed        = "reprocessed"          // dead-letter messages a reprocessing run read
	metricMalformed          = "malformed"            // dead-letter messages that could not be read
	metricBadInput           = "bad_input"            // payloads refused before the throttle (payloadCheckFn)
	metricGenerated          = "generated"            // elements the built-in generators emitted
	metricDeadLetterRejected = "dead_letter_rejected" // dead-letter messages Pub/Sub refused
)
