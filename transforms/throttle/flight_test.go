package throttle

import (
	"context"
	"errors"
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
		a = append(a, b.start("a", timeout))
	}
	for range 2 {
		b.start("b", timeout)
	}
	for _, tc := range []struct {
		key  string
		want int
	}{{"a", 8}, {"b", 7}, {"c", 5}} {
		if got := b.room(tc.key); got != tc.want {
			t.Errorf("room(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
	b.finish("a", a[0], callResult{latency: time.Second})
	if got := b.room("b"); got != 8 {
		t.Errorf("room(b) after an answer to a: %d, want 8", got)
	}
	for range 20 {
		b.start("c", timeout)
	}
	if got := b.room("a"); got != 1 {
		t.Errorf("room(a) with the ceiling spent by others: %d, want 1", got)
	}
}
