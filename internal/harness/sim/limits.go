package sim

import "time"

// LimitUse is what a run took of one limit of a backend with several
// (TokenLimits): the share of each window's limit used, and the requests
// the limit refused.
type LimitUse struct {
	// Name names the limit, such as LimitOutput.
	Name string
	// Window is the length of the limit's windows; window i begins i ×
	// Window after the start of the run.
	Window time.Duration
	// Use holds, for each window that ended by the end of the run, what
	// the window took of the limit over the limit at the capacity in
	// force at the window's start (0 if that is 0). It is above 1 where
	// the window's last requests overdrew the limit.
	Use []float64
	// Refused counts the requests the limit refused over the whole run,
	// the competitor's too; a request refused by several limits counts
	// against the first in the backend's order.
	Refused int64
}

// limiter is a Backend with several limits, which reports their use.
type limiter interface {
	// limitUse returns the use of each limit, in the backend's order, in
	// the windows that ended by end.
	limitUse(end time.Duration) []LimitUse
}

// leastUse returns the least use of the windows of l that begin at or
// after from, leaving out the first, and when that window began; ok is
// false when there is none.
func (l LimitUse) leastUse(from time.Duration) (use float64, at time.Duration, ok bool) {
	for i := 1; i < len(l.Use); i++ {
		start := time.Duration(i) * l.Window
		if start < from {
			continue
		}
		if !ok || l.Use[i] < use {
			use, at, ok = l.Use[i], start, true
		}
	}
	return use, at, ok
}
