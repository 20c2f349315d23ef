// Package defaults holds the defaults of transforms/throttle's options:
// the transform starts from them, and the pipeline's flags take them as
// their default values, so that -help shows them. They are written here
// only, and documented to users on the options themselves.
package defaults

import "time"

// The defaults of the options of throttle.Adaptive. The throughput ceiling
// of one group is BatchSize / BatchInterval calls per second (with a fast
// backend), so the ceiling of the transform is Groups × that.
// CallsInFlight 0 sizes a group's calls under way to its pace at the calls'
// latency, up to MaxCallsInFlight.
const (
	Groups           = 1                // WithGroups
	BatchSize        = 100              // WithBatchSize
	BatchInterval    = time.Second      // WithBatchInterval
	MaxAttempts      = 3                // WithMaxAttempts
	MaxAge           = 10 * time.Minute // WithMaxAge
	CallTimeout      = 2 * time.Minute  // WithCallTimeout: above a slow API's tail (median 3 s, p99 20 s)
	CallsInFlight    = 0                // WithCallsInFlight: sized to the pace
	MaxCallsInFlight = 256              // the most calls under way per group when sized
	ItemsPerCall     = 1                // WithItemsPerCall: one element per call, the caller's Call
	QuotaTimeout     = time.Second      // QuotaConfig.Timeout: a round trip to the quota service
)
