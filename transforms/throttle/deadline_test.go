package throttle

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDeadlines: calls started close together share a context, and each
// gets the call timeout less at most deadlineSlack, never more.
func TestDeadlines(t *testing.T) {
	const timeout = 2 * time.Minute
	t0 := time.Now()
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	var d deadlines
	first := d.next(parent, t0, timeout)
	for _, c := range []struct {
		name   string
		parent context.Context
		after  time.Duration
		shared bool
	}{
		{"at once", parent, 0, true},
		{"within the slack", parent, deadlineSlack(timeout) - time.Millisecond, true},
		{"past the slack", parent, deadlineSlack(timeout) + time.Millisecond, false},
		{"another parent", context.Background(), 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d deadlines
			d.next(parent, t0, timeout)
			now := t0.Add(c.after)
			ctx := d.next(c.parent, now, timeout)
			if got := ctx == d.ctx && d.live[0].until.Equal(d.until) && len(d.live) == 1; got != c.shared {
				t.Errorf("shared %v, want %v", got, c.shared)
			}
			dl, ok := ctx.Deadline()
			if !ok || dl.After(now.Add(timeout)) || dl.Before(now.Add(timeout-deadlineSlack(timeout))) {
				t.Errorf("deadline %v after the start, want within [%v, %v]", dl.Sub(now), timeout-deadlineSlack(timeout), timeout)
			}
		})
	}
	if dl, _ := first.Deadline(); !dl.Equal(t0.Add(timeout)) {
		t.Errorf("first deadline %v after the start, want %v", dl.Sub(t0), timeout)
	}
	// Past its deadline, a context ends as timed out, however late its
	// timer fires: it is released only a while later.
	var late deadlines
	ctx := late.next(parent, t0, time.Millisecond)
	late.next(parent, t0.Add(time.Second), time.Millisecond)
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("a context past its deadline ended with %v, want DeadlineExceeded", ctx.Err())
	}
	cancel()
	if first.Err() == nil {
		t.Errorf("a call's context outlived its parent (the worker's call board)")
	}
}
