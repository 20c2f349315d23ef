package throttle

import (
	"sync/atomic"
	"time"
)

// minutely lets a worker log a line once a minute at most, whichever of
// its goroutines asks. The zero value is ready.
type minutely struct{ last atomic.Int64 } // unix nanos of the last line

// due reports whether a minute has passed since the last line and, if so,
// claims this one.
func (m *minutely) due() bool {
	now, last := time.Now().UnixNano(), m.last.Load()
	return now-last >= int64(time.Minute) && m.last.CompareAndSwap(last, now)
}
