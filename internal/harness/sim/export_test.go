package sim

import "time"

// LimitUseOf returns what b, a backend with several limits (TokenLimits),
// took of each in the windows that ended by end.
func LimitUseOf(b Backend, end time.Duration) []LimitUse { return b.(limiter).limitUse(end) }
