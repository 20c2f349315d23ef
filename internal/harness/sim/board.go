package sim

import (
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// board is one worker's calls under way when the calls are sized
// (Config.SizeCalls), as the transform's call board keeps them
// (transforms/throttle, flight.go): how many of its groups' calls are under
// way, their mean latency, and the adaptive.Ceiling that bounds them
// together. A call counts from its sending until its answer comes, whether
// or not a firing has collected it.
type board struct {
	ceiling  *adaptive.Ceiling
	underWay int
	latency  time.Duration // moving average of the answers'; 0 before the first
}

// latencyWeight is the weight of an answer's latency in the board's mean,
// the transform's.
const latencyWeight = 1.0 / 8

// newBoard returns a board whose ceiling is at most max.
func newBoard(max int) (*board, error) {
	c, err := adaptive.NewCeiling(adaptive.CeilingConfig{Max: max})
	if err != nil {
		return nil, err
	}
	return &board{ceiling: c}, nil
}

// start counts a call sent at sent.
func (b *board) start(sent time.Time) {
	b.ceiling.Sent(sent, b.underWay)
	b.underWay++
}

// finish counts the answer, at at, to a call sent at sent.
func (b *board) finish(sent, at time.Time) {
	b.underWay--
	b.ceiling.Observe(sent, at)
	d := at.Sub(sent)
	if b.latency == 0 {
		b.latency = d
		return
	}
	b.latency += time.Duration(float64(d-b.latency) * latencyWeight)
}

// room returns how many calls a group with mine calls under way may have:
// the ceiling less the other groups' calls under way, at least 1.
func (b *board) room(mine int) int {
	return max(1, b.ceiling.Limit()-(b.underWay-mine))
}
