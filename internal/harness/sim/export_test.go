package sim

import (
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// LimitUseOf returns what b, a backend with several limits (TokenLimits),
// took of each in the windows that ended by end.
func LimitUseOf(b Backend, end time.Duration) []LimitUse { return b.(limiter).limitUse(end) }

// QuotaState returns a backend's quota state as the header families read
// it: limit, capacity and remaining, the reset and the period.
func QuotaState(limit, capacity, remaining int64, reset, period time.Duration) quotaState {
	return quotaState{limit: limit, capacity: capacity, remaining: remaining, reset: reset, period: period}
}

// ReadHeaders returns s as family h tells it on an answer sent at answered.
func ReadHeaders(h Headers, s quotaState, start time.Time, answered time.Duration) adaptive.Quota {
	return h.read(s, start, answered)
}
