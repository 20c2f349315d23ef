package sim

import (
	"container/heap"
	"math/rand/v2"
	"time"
)

// actor is a source of events: a group or the competitor.
type actor interface {
	next() time.Duration
	step() error
}

// actors orders actors by their next event; events at the same time come
// in a random order, drawn afresh whenever an actor is rescheduled, so no
// group always goes first (as among concurrent clients; the order is
// seeded with the run).
type actors struct {
	a   []actor
	at  []time.Duration
	tie []uint64
	rnd *rand.Rand
}

func (q *actors) Len() int { return len(q.a) }
func (q *actors) Less(i, j int) bool {
	if q.at[i] != q.at[j] {
		return q.at[i] < q.at[j]
	}
	return q.tie[i] < q.tie[j]
}
func (q *actors) Swap(i, j int) {
	q.a[i], q.a[j] = q.a[j], q.a[i]
	q.at[i], q.at[j] = q.at[j], q.at[i]
	q.tie[i], q.tie[j] = q.tie[j], q.tie[i]
}

// Push and Pop are not used: the set of actors is fixed.
func (q *actors) Push(any) { panic("sim: actors.Push") }
func (q *actors) Pop() any { panic("sim: actors.Pop") }

func (q *actors) add(a actor) {
	q.a, q.at, q.tie = append(q.a, a), append(q.at, a.next()), append(q.tie, q.rnd.Uint64())
}

// reschedule updates the first actor's time after it stepped.
func (q *actors) reschedule() {
	q.at[0], q.tie[0] = q.a[0].next(), q.rnd.Uint64()
	heap.Fix(q, 0)
}

// hasCompetitor reports whether a phase has a competitor.
func (s *Scenario) hasCompetitor() bool {
	for _, p := range s.Phases {
		if p.Competitor > 0 {
			return true
		}
	}
	return false
}

// competitor is the uncontrolled client.
type competitor struct {
	r     *run
	clock poissonClock
	at    time.Duration
}

func (c *competitor) next() time.Duration { return c.at }

func (c *competitor) step() error {
	r := c.r
	sec := r.second(c.at)
	r.series.CompetitorSent[sec]++
	if ok, _ := r.backend.Take(c.at); ok {
		r.series.CompetitorAccepted[sec]++
	}
	c.at = c.clock.next(c.at)
	return nil
}
