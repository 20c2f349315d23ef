package throttle

import (
	"math"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"

	"github.com/beamthrottle/beamthrottle/internal/interrupt"
)

// Interrupts. When the pipeline is interrupted (pipeline.Run's context is
// cancelled while its workers run in the same process, see package
// internal/interrupt), the transform makes no new call: an element that
// arrives, or that its group holds, is routed at once without a call, as
// client-throttled with interruptedMessage; as server-throttled, its error
// ending with interruptedAgain, if its last attempt was answered 429; or
// dropped under Drop. Calls under way finish and their answers are routed
// as usual. Every group routes its queue when its timer next fires, so a
// bounded pipeline ends as soon as each group has fired once more.
// metricInterrupted counts these elements.

// interruptedMessage is the error of an element routed because the
// pipeline was interrupted; interruptedAgain ends the error of one whose
// last attempt was answered 429.
const (
	interruptedMessage = "Throttled by Client. Not called: the pipeline was interrupted"
	interruptedAgain   = "Not tried again: the pipeline was interrupted"
)

// interrupted reports whether the pipeline is being interrupted.
func interrupted() bool { return interrupt.Is() }

// interrupt routes it, which the firing will not send because the pipeline
// is interrupted.
func (fr *driver) interrupt(now time.Time, it item) {
	fl := it.Last
	if fl.Outcome == OutcomeServerThrottled {
		fl.Error += ". " + interruptedAgain
	} else {
		fl = failure{Outcome: OutcomeClientThrottled, Prob: 1, Error: interruptedMessage}
	}
	fr.t.interrupted++
	fr.fail(now, it, fl)
}

// drain routes every element of the group's queue (see interrupt) and
// leaves it empty.
func (fr *driver) drain(sp state.Provider, meta *queueMeta) error {
	for meta.Head < meta.Tail {
		head := meta.Head
		got, err := fr.fn.take(sp, meta, max(fr.fn.BatchSize, 1), math.MaxInt64)
		if err != nil {
			return err
		}
		now := fr.now()
		for _, it := range got {
			fr.interrupt(now, it)
		}
		if len(got) == 0 && meta.Head == head {
			break // nothing left that take can reach
		}
	}
	meta.Head, meta.Tail, meta.Size = 0, 0, 0
	return nil
}
