package sim

import (
	"math"
	"time"
)

// Queuer is a Backend that makes requests wait for their turn instead of
// refusing them. The groups' calls go through Admit, and each answer comes
// the wait plus the call's latency after the call; the competitor's
// requests go through Take and take their turns as well.
type Queuer interface {
	Backend
	// Admit serves a request arriving at at, as Take does, and returns as
	// well how long an accepted one waits for its turn.
	Admit(at time.Duration) (ok bool, retryAfter, wait time.Duration)
}

// Queue is a server that queues instead of refusing, as the test server's
// Mode Queue does (and nginx's limit_req with a burst and no nodelay, or an
// inference server): it serves one request per 1/capacity, in arrival
// order, and never refuses for its capacity. A request that comes while
// others wait is served when its turn comes, and answered its latency
// after that; a turn that would fall in an outage waits for its end (a
// request that would wait for an outage that never ends is refused, with
// a Retry-After of 1 s). Each turn lasts 1/capacity at the capacity in
// force when it begins. NextAvailable is the first time a request would be
// served without waiting.
func Queue() BackendModel {
	return BackendModel{
		Name:        "queue",
		Description: "a server that queues instead of refusing: one request per 1/capacity in arrival order, the wait added to the latency, never a 429",
		New: func(c Capacity, seed uint64) Backend {
			return &queue{cap: c}
		},
	}
}

// queue is the Backend of Queue. Times are float nanoseconds since the
// start of the run, as gcra's.
type queue struct {
	cap  Capacity
	next float64 // when the next request's turn can begin
}

var _ Queuer = (*queue)(nil)

// turn returns when the turn of a request arriving at at begins and when
// the turn after it can, or ok false if it would never come.
func (q *queue) turn(at time.Duration) (begin, next float64, ok bool) {
	t := math.Max(float64(at), q.next)
	for {
		rate, until := q.cap.At(time.Duration(t))
		if rate > 0 {
			return t, t + interval(rate), true
		}
		if until == Never {
			return 0, 0, false
		}
		t = float64(until)
	}
}

// Admit implements Queuer.
func (q *queue) Admit(at time.Duration) (bool, time.Duration, time.Duration) {
	begin, next, ok := q.turn(at)
	if !ok {
		return false, time.Second, 0
	}
	q.next = next
	return true, 0, max(time.Duration(math.Ceil(begin))-at, 0)
}

// Take implements Backend.
func (q *queue) Take(at time.Duration) (bool, time.Duration) {
	ok, ra, _ := q.Admit(at)
	return ok, ra
}

// NextAvailable implements Backend: the first time not before at when a
// request would be served without waiting.
func (q *queue) NextAvailable(at time.Duration) time.Duration {
	begin, _, ok := q.turn(at)
	if !ok {
		return Never
	}
	return max(time.Duration(math.Ceil(begin)), at)
}
