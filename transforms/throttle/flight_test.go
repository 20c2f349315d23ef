package throttle

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*barrierCaller)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*gatedCaller)(nil)).Elem())
}

// barrier holds every call of a barrierCaller until N calls have started.
var barrier struct {
	mu      sync.Mutex
	started int
	open    chan struct{}
}

// resetBarrier closes the barrier for a new test.
func resetBarrier() {
	barrier.mu.Lock()
	defer barrier.mu.Unlock()
	barrier.started, barrier.open = 0, make(chan struct{})
}

// barrierCaller answers no call until N calls have started (or fails each
// after Wait): a slow API whose answers come only once calls from several
// firings are under way.
type barrierCaller struct {
	N    int
	Wait time.Duration
}

func (c barrierCaller) Call(ctx context.Context, req []byte) ([]byte, error) {
	barrier.mu.Lock()
	barrier.started++
	if barrier.started == c.N {
		close(barrier.open)
	}
	open := barrier.open
	barrier.mu.Unlock()
	select {
	case <-open:
		return req, nil
	case <-time.After(c.Wait):
		return nil, errors.New("barrier not reached: calls did not outlive their firing")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestCallsOutliveFirings: each firing takes a batch of 5 and sends it;
// no call is answered until all 15 have started, so the second and third
// batches are sent only if firings end with their calls under way and later
// firings carry them. Every element ends in Success, each called once.
func TestCallsOutliveFirings(t *testing.T) {
	resetBarrier()
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, 15), barrierCaller{N: 15, Wait: 20 * time.Second},
		WithBatchSize(5), WithBatchInterval(100*time.Millisecond), WithGroups(1), WithCallTimeout(time.Minute),
		WithCallsInFlight(64), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Count(s, out.Success, "success", 15)
	passert.Empty(s, out.Errors)
	res := runPipeline(t, p, true)
	for name, want := range map[string]int64{metricCalls: 15, metricRecalled: 0, metricOrphaned: 0} {
		if got := counter(t, res, name); got != want {
			t.Errorf("%s: got %d, want %d", name, got, want)
		}
	}
}

// forgetting is what TestForgottenCallsRecalled's board forgot and how
// often its gatedCaller was called for each element.
var forgetting struct {
	mu       sync.Mutex
	gate     chan struct{}   // closed once the board forgot the calls
	accepted int64           // elements routed to Success so far
	forgot   map[string]bool // the payloads of the elements whose calls it forgot
	calls    map[string]int  // calls made, by payload
	made     int             // calls made in all
}

// resetForgetting closes the gate and clears the counts for a new test.
func resetForgetting() {
	forgetting.mu.Lock()
	defer forgetting.mu.Unlock()
	forgetting.gate, forgetting.accepted, forgetting.made = make(chan struct{}), 0, 0
	forgetting.forgot, forgetting.calls = map[string]bool{}, map[string]int{}
}

// forgetOnce runs at the end of each firing (flyingStored), before the
// group can fire again. At the first firing that ends with calls under way
// once an answer was accepted, it makes the worker's call board forget the
// group's calls, as the board of a worker that restarted, or of the worker
// the key moved to, does not know the calls the group's state names; then
// it opens the gate.
func forgetOnce(fr *driver) {
	forgetting.mu.Lock()
	defer forgetting.mu.Unlock()
	forgetting.accepted += fr.t.accepted
	if forgetting.accepted == 0 || len(fr.flown) == 0 || len(forgetting.forgot) > 0 {
		return
	}
	for _, fl := range fr.flown {
		for _, it := range fl.items {
			forgetting.forgot[string(it.Payload)] = true
		}
	}
	fr.fn.board.forget(fr.key)
	close(forgetting.gate)
}

// forget drops group key's calls from the board.
func (b *callBoard) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.groups, key)
}

// gatedCaller answers its first call at once and no other until the gate
// opens (or fails it after Wait), then each Delay after the gate opened or
// after it was called: a slow API whose answers come only after a firing
// ended with calls under way. It counts its calls by payload.
//
// The first answer is there for the SRE rule: it counts the requests of
// calls the board forgot but never their answers, so before any accept it
// would reject the elements called again.
type gatedCaller struct {
	Delay, Wait time.Duration
}

func (c gatedCaller) Call(ctx context.Context, req []byte) ([]byte, error) {
	forgetting.mu.Lock()
	forgetting.calls[string(req)]++
	forgetting.made++
	first, gate := forgetting.made == 1, forgetting.gate
	forgetting.mu.Unlock()
	if first {
		return req, nil
	}
	select {
	case <-gate:
	case <-time.After(c.Wait):
		return nil, errors.New("gate not opened: no firing ended with calls under way")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-time.After(c.Delay):
		return req, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestForgottenCallsRecalled covers the path where the group's state
// outlives the worker's memory (Dataflow moving a key to another worker,
// or a worker restart). Once an answer was accepted, the first firing that
// ends with calls under way has its calls forgotten by the worker's call
// board; none of them can have been answered, since the caller answers
// nothing else until then, and then each call 3.5 batch intervals after it
// is made. The next firing finds the calls its state names unknown to the
// board and calls their elements again: recalled counts exactly them, each
// is called twice and every other element once, and every element ends in
// Success once. The counts do not depend on timing.
func TestForgottenCallsRecalled(t *testing.T) {
	const n = 20
	resetForgetting()
	hook := forgetOnce
	flyingStored.Store(&hook)
	defer flyingStored.Store(nil)
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), gatedCaller{Delay: 350 * time.Millisecond, Wait: 20 * time.Second},
		WithBatchSize(5), WithBatchInterval(100*time.Millisecond), WithGroups(1), WithCallTimeout(time.Minute),
		WithCallsInFlight(64), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	want := make([]any, n)
	for i := range want {
		want[i] = fmt.Sprintf("e%07d", i)
	}
	passert.Equals(s, beam.ParDo(s, bytesToString, out.Success), want...)
	passert.Empty(s, out.Errors)
	passert.Empty(s, out.ClientThrottled)
	passert.Empty(s, out.ServerThrottled)
	res := runPipeline(t, p, false)

	forgetting.mu.Lock()
	defer forgetting.mu.Unlock()
	forgot := int64(len(forgetting.forgot))
	if forgot == 0 {
		t.Fatal("the board forgot no calls: no firing ended with calls under way")
	}
	for name, want := range map[string]int64{metricRecalled: forgot, metricCalls: n + forgot, metricOrphaned: 0} {
		if got := counter(t, res, name); got != want {
			t.Errorf("%s: got %d, want %d (%d elements' calls forgotten)", name, got, want, forgot)
		}
	}
	for _, e := range want {
		e := e.(string)
		want := 1
		if forgetting.forgot[e] {
			want = 2
		}
		if got := forgetting.calls[e]; got != want {
			t.Errorf("calls for %s (forgotten: %v): got %d, want %d", e, forgetting.forgot[e], got, want)
		}
	}
	t.Logf("the board forgot the calls of %d of %d elements", forgot, n)
}

// TestBoardRoom: a group's room under the worker's ceiling is the ceiling
// less the other groups' calls under way; an answer frees its call's slot.
func TestBoardRoom(t *testing.T) {
	b, err := newCallBoard()
	if err != nil {
		t.Fatal(err)
	}
	if got := b.room("a"); got != 0 {
		t.Errorf("without a ceiling: room %d, want 0 (no bound)", got)
	}
	if err := b.useCeiling(10); err != nil {
		t.Fatal(err)
	}
	timeout := time.Now().Add(time.Minute)
	var a []*pending
	for range 3 {
		a = append(a, b.start("a", time.Now(), timeout))
	}
	for range 2 {
		b.start("b", time.Now(), timeout)
	}
	for _, tc := range []struct {
		key  string
		want int
	}{{"a", 8}, {"b", 7}, {"c", 5}} {
		if got := b.room(tc.key); got != tc.want {
			t.Errorf("room(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
	b.finish(a[0], callResult{latency: time.Second}, time.Now())
	if got := b.room("b"); got != 8 {
		t.Errorf("room(b) after an answer to a: %d, want 8", got)
	}
	for range 20 {
		b.start("c", time.Now(), timeout)
	}
	if got := b.room("a"); got != 1 {
		t.Errorf("room(a) with the ceiling spent by others: %d, want 1", got)
	}
}
