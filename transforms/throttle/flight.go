package throttle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"

	"github.com/beamthrottle/beamthrottle/internal/firing"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// workerCalls holds, per transform running in this process (by
// throttleFn.ID), the calls its groups have under way or answered here: a
// call outlives the firing that sent it (a slow API's answer comes seconds
// later), and a later firing of its group collects the answer.
var workerCalls = &registry[*callBoard]{m: map[string]*shared[*callBoard]{}}

// flyingStored, when tests set it, is called by each firing once it has
// named in state the calls it ends with under way (fr.flown), before its
// group can fire again. Nil outside tests.
var flyingStored atomic.Pointer[func(fr *driver)]

// flyingCall is a call a firing ended with under way, as the group's state
// names it (queueMeta.Flying); its elements are in the Flying map state
// under ID, so a worker that dies loses none of them.
type flyingCall struct {
	ID   string
	Sent int64   // unix nanos, by the throttle's clock
	Prob float64 // the policy's rejection probability when it decided
}

// callBoard is the calls of one transform's groups on this worker. It is
// safe for concurrent use: a call's goroutine posts its answer while a
// firing of its group may be waiting for it.
type callBoard struct {
	// ctx is the calls' context: a call outlives the bundle that made it,
	// and ends only with the board (the last DoFn instance of the
	// transform in the process torn down).
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	nonce   string // this board's: call IDs are unique across workers and restarts
	seq     int64
	groups  map[string]*groupCalls
	latency time.Duration // the calls' mean latency (moving average); 0 before the first answer

	// ceiling bounds the calls under way of groups whose calls are sized
	// to their pace by the calls' latency (a server that queues); nil
	// until such a group sets it up.
	ceiling  *adaptive.Ceiling
	underWay int // the calls not answered yet, of every group
}

// useCeiling sets up the board's ceiling on calls under way, at most max,
// unless it has one.
func (b *callBoard) useCeiling(max int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ceiling != nil {
		return nil
	}
	c, err := adaptive.NewCeiling(adaptive.CeilingConfig{Max: max})
	b.ceiling = c
	return err
}

// room returns how many calls group key may have under way under the
// board's ceiling: the ceiling less the other groups' calls under way, at
// least 1; 0 without a ceiling.
func (b *callBoard) room(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ceiling == nil {
		return 0
	}
	mine := 0
	if g, ok := b.groups[key]; ok {
		for _, p := range g.calls {
			if !p.done {
				mine++
			}
		}
	}
	return max(1, b.ceiling.Limit()-(b.underWay-mine))
}

// latencyWeight is the weight of a call's latency in the board's average.
const latencyWeight = 1.0 / 8

// meanLatency returns the mean latency of the calls answered on the board
// (a moving average), or 0 before the first answer.
func (b *callBoard) meanLatency() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.latency
}

// groupCalls is one group's calls on a callBoard.
type groupCalls struct {
	calls map[int64]*pending // by seq
	wake  chan struct{}      // signalled when one of them is answered
}

// pending is a call under way or answered, not yet collected by a firing.
type pending struct {
	seq       int64       // on its board: its ID is the board's nonce and seq
	g         *groupCalls // its group's calls, which hold it until it is answered
	timeout   time.Time   // by the wall clock
	sent      time.Time   // by the wall clock
	done      bool
	res       callResult
	at        time.Time // by the wall clock: when the answer came
	collected bool      // a firing of its group gave the answer to its core (only the group's firings touch it)
}

func newCallBoard() (*callBoard, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &callBoard{ctx: ctx, cancel: cancel, nonce: hex.EncodeToString(b[:]), groups: map[string]*groupCalls{}}, nil
}

// group returns the calls of group key, made if there are none.
func (b *callBoard) group(key string) *groupCalls {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.groupLocked(key)
}

// groupLocked is group, with b.mu held.
func (b *callBoard) groupLocked(key string) *groupCalls {
	g, ok := b.groups[key]
	if !ok {
		g = &groupCalls{calls: map[int64]*pending{}, wake: make(chan struct{}, 1)}
		b.groups[key] = g
	}
	return g
}

// start notes a call of group key sent at sent, answered by timeout at the
// latest (both by the wall clock).
func (b *callBoard) start(key string, sent, timeout time.Time) *pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groupLocked(key)
	b.seq++
	p := &pending{seq: b.seq, g: g, timeout: timeout, sent: sent}
	if b.ceiling != nil {
		b.ceiling.Sent(p.sent, b.underWay)
	}
	b.underWay++
	g.calls[p.seq] = p
	return p
}

// id returns the ID of call p, as the group's state names it: unique
// across workers and restarts.
func (b *callBoard) id(p *pending) string { return b.nonce + "-" + strconv.FormatInt(p.seq, 36) }

// seqOf returns the seq of the call named id, if this board made it.
func (b *callBoard) seqOf(id string) (int64, bool) {
	rest, ok := strings.CutPrefix(id, b.nonce+"-")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(rest, 36, 64)
	return seq, err == nil
}

// finish posts the answer res to call p, which came at at (by the wall
// clock), unless it has one (a call given up at its timeout), and wakes a
// firing of the group waiting for answers.
func (b *callBoard) finish(p *pending, res callResult, at time.Time) {
	b.mu.Lock()
	if !p.done {
		p.done, p.res, p.at = true, res, at
		b.underWay--
		if b.ceiling != nil {
			b.ceiling.Observe(p.sent, p.at)
		}
		if b.latency == 0 {
			b.latency = res.latency
		} else {
			b.latency += time.Duration(float64(res.latency-b.latency) * latencyWeight)
		}
	}
	b.mu.Unlock()
	select {
	case p.g.wake <- struct{}{}:
	default:
	}
}

// answer returns the answer to call p and when it came (by the wall
// clock), if it has one.
func (b *callBoard) answer(p *pending) (res callResult, at time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return p.res, p.at, p.done
}

// lookup returns group key's call id, if this board has it.
func (b *callBoard) lookup(key, id string) (*pending, bool) {
	seq, ok := b.seqOf(id)
	if !ok {
		return nil, false
	}
	g := b.group(key)
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := g.calls[seq]
	return p, ok
}

// sweep forgets group key's calls other than those in keep (the calls the
// group's state names, by seq), once they are answered: their answers were
// collected, or belong to a firing whose bundle failed, whose elements the
// runner gives to the retry. It returns how many of those it forgot
// without their answer being collected.
func (b *callBoard) sweep(key string, keep map[int64]bool) (orphans int) {
	g := b.group(key)
	b.mu.Lock()
	defer b.mu.Unlock()
	for seq, p := range g.calls {
		if keep[seq] || !p.done {
			continue
		}
		if !p.collected {
			orphans++
		}
		delete(g.calls, seq)
	}
	if len(g.calls) == 0 {
		delete(b.groups, key)
	}
	return orphans
}

// carry gives the firing's core the calls the group's last firing ended
// with (meta.Flying), whose elements come first in the core's order, and
// returns those elements. A call the worker's board does not have (the
// worker restarted, or the group moved here from another) is called again:
// its elements go back to the head of the queue, counted as recalled.
func (fr *driver) carry(sp state.Provider, meta *queueMeta) ([]item, error) {
	f, core := fr.fn, fr.begin()
	var items, recalled []item
	kept := meta.Flying[:0:0]
	for _, fc := range meta.Flying {
		b, ok, err := f.Flying.Get(sp, fc.ID)
		if err != nil {
			return nil, err
		}
		p, found := f.board.lookup(fr.key, fc.ID)
		if !ok || !found {
			recalled = append(recalled, b.Items...)
			if err := f.Flying.Remove(sp, fc.ID); err != nil {
				return nil, err
			}
			continue
		}
		es := make([]firing.Elem, len(b.Items))
		for i := range b.Items {
			es[i] = elemOf(&b.Items[i])
			if k := b.Items[i].CacheKey; k != "" && f.cache != nil {
				if fr.keys == nil {
					fr.keys = map[string]bool{}
				}
				fr.keys[k] = true // its duplicates wait for its answer
			}
		}
		sent := time.Unix(0, fc.Sent)
		n := core.Carry(sent, es, fc.Prob)
		c := &call{n: n, items: b.Items, p: p, sent: sent}
		fr.calls = append(fr.calls, c)
		fr.open = append(fr.open, c)
		items = append(items, b.Items...)
		kept = append(kept, fc)
	}
	meta.Flying = kept
	if len(recalled) > 0 {
		fr.t.recalled += int64(len(recalled))
		if err := f.putBack(sp, meta, recalled); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// flown is a call the firing ended with under way, and its elements as the
// core left them.
type flown struct {
	call  flyingCall
	items []item
}

// flying notes, once the core is done, the calls it ended with under way
// (see storeFlying); items are its elements, by the core's index.
func (fr *driver) flying(items []item) {
	core := fr.core
	for _, n := range core.Flying() {
		c := fr.calls[n]
		fl := flown{call: flyingCall{ID: fr.fn.board.id(c.p), Sent: core.CallSent(n).UnixNano(), Prob: core.CallProb(n)}}
		for _, k := range core.CallElems(n) {
			it := items[k]
			syncItem(&it, core.Elem(k))
			fl.items = append(fl.items, it)
		}
		fr.flown = append(fr.flown, fl)
	}
}

// storeFlying writes to the group's state the calls the firing ended with
// under way, and removes those it collected; the worker's board forgets
// the calls no state names once they are answered.
func (fr *driver) storeFlying(sp state.Provider, meta *queueMeta) error {
	f := fr.fn
	was := map[string]bool{}
	for _, fc := range meta.Flying {
		was[fc.ID] = true
	}
	keep := map[string]bool{}
	seqs := map[int64]bool{}
	meta.Flying = meta.Flying[:0]
	for _, fl := range fr.flown {
		keep[fl.call.ID] = true
		if seq, ok := f.board.seqOf(fl.call.ID); ok {
			seqs[seq] = true
		}
		meta.Flying = append(meta.Flying, fl.call)
		if !was[fl.call.ID] {
			if err := f.Flying.Put(sp, fl.call.ID, batch{Items: fl.items}); err != nil {
				return err
			}
		}
	}
	for id := range was {
		if !keep[id] {
			if err := f.Flying.Remove(sp, id); err != nil {
				return err
			}
		}
	}
	fr.t.orphaned += int64(f.board.sweep(fr.key, seqs))
	if h := flyingStored.Load(); h != nil {
		(*h)(fr)
	}
	return nil
}
