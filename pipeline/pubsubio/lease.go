package pubsubio

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// leaseKeeper keeps pulled messages leased, by extending their ack deadlines
// periodically, from the Pull until they are acknowledged (remove: by the
// next round of Read, or by Ack in ManualAck mode) or until the time given
// to add has passed, whichever comes first. Its
// goroutine runs only while it holds leases, so a keeper whose DoFn is never
// torn down does not leak it. It is safe for concurrent use.
type leaseKeeper struct {
	// extend sets the ack deadline of ackIDs to d from now.
	extend func(ctx context.Context, ackIDs []string, d time.Duration) error
	// deadline is the ack deadline requested at each extension; extensions
	// happen every 2/3 of it.
	deadline time.Duration

	mu      sync.Mutex
	leases  map[string]time.Time // ack ID → time after which it is not extended
	running bool                 // the extension goroutine is running
}

// extendNow sets the ack deadline of ackIDs to k.deadline from now.
func (k *leaseKeeper) extendNow(ctx context.Context, ackIDs []string) error {
	return k.extend(ctx, ackIDs, k.deadline)
}

// add leases ackIDs until the given time. The caller has already set their
// deadline to k.deadline.
func (k *leaseKeeper) add(ackIDs []string, until time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.leases == nil {
		k.leases = make(map[string]time.Time, len(ackIDs))
	}
	for _, id := range ackIDs {
		k.leases[id] = until
	}
	if !k.running && len(k.leases) > 0 {
		k.running = true
		go k.run()
	}
}

// remove stops extending ackIDs.
func (k *leaseKeeper) remove(ackIDs []string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range ackIDs {
		delete(k.leases, id)
	}
}

// outstanding returns the number of leases held.
func (k *leaseKeeper) outstanding() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.leases)
}

// run extends the held leases every 2/3 of the deadline until none is left.
func (k *leaseKeeper) run() {
	every := max(k.deadline*2/3, time.Second)
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		<-t.C
		ids := k.due(time.Now())
		if ids == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		if err := k.extend(ctx, ids, k.deadline); err != nil {
			// Not fatal: the messages may be delivered again, which
			// at-least-once delivery allows.
			slog.Warn("pubsubio.Read: extending ack deadlines failed", "messages", len(ids), "error", err)
		}
		cancel()
		t.Reset(every)
	}
}

// due drops the leases whose time has passed and returns the others; nil
// (and the goroutine must stop) when none is left.
func (k *leaseKeeper) due(now time.Time) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	ids := make([]string, 0, len(k.leases))
	for id, until := range k.leases {
		if now.After(until) {
			delete(k.leases, id)
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		k.running = false
		return nil
	}
	return ids
}
