package cache

import (
	"context"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestLRU(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	type step struct {
		advance time.Duration
		set     string // key to set to "v"+key, with ttl
		ttl     time.Duration
		get     string
		want    bool
	}
	tests := []struct {
		name    string
		entries int
		steps   []step
	}{
		{"hit before the TTL, miss at it", 10, []step{
			{set: "a", ttl: time.Minute},
			{advance: 59 * time.Second, get: "a", want: true},
			{advance: time.Second, get: "a", want: false},
		}},
		{"no TTL never expires", 10, []step{
			{set: "a"},
			{advance: 1000 * time.Hour, get: "a", want: true},
		}},
		{"a new Set renews the TTL", 10, []step{
			{set: "a", ttl: time.Minute},
			{advance: 50 * time.Second, set: "a", ttl: time.Minute},
			{advance: 50 * time.Second, get: "a", want: true},
		}},
		{"the least recently used goes first", 2, []step{
			{set: "a"}, {set: "b"},
			{get: "a", want: true}, // a is now the most recent
			{set: "c"},             // evicts b
			{get: "b", want: false},
			{get: "a", want: true},
			{get: "c", want: true},
		}},
		{"missing key", 2, []step{{get: "x", want: false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewLRU(tc.entries, clock.now)
			for i, s := range tc.steps {
				clock.t = clock.t.Add(s.advance)
				if s.set != "" {
					if err := c.Set(ctx, s.set, []byte("v"+s.set), s.ttl); err != nil {
						t.Fatal(err)
					}
				}
				if s.get == "" {
					continue
				}
				v, ok, err := c.Get(ctx, s.get)
				if err != nil || ok != s.want || ok && string(v) != "v"+s.get {
					t.Errorf("step %d: Get(%q) = %q, %v, %v; want found %v", i, s.get, v, ok, err, s.want)
				}
			}
			if c.Len() > tc.entries {
				t.Errorf("Len = %d, want at most %d", c.Len(), tc.entries)
			}
		})
	}
}

// TestRedis runs against Debian's redis-server: values round-trip, a TTL
// expires on the server's clock, and a stopped server is an error within
// the timeout, not a hang.
func TestRedis(t *testing.T) {
	srv := services.StartRedis(t)
	ctx := context.Background()
	r := NewRedis(srv.Addr, 200*time.Millisecond)
	defer r.Close()

	if _, ok, err := r.Get(ctx, "missing"); ok || err != nil {
		t.Fatalf("Get(missing) = %v, %v; want a miss without error", ok, err)
	}
	if err := r.Set(ctx, "k", []byte{0, 1, 2, 255}, 0); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := r.Get(ctx, "k"); !ok || err != nil || string(v) != "\x00\x01\x02\xff" {
		t.Fatalf("Get(k) = %q, %v, %v", v, ok, err)
	}
	if err := r.Set(ctx, "short", []byte("x"), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := r.Get(ctx, "short")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break // expired on the server
		}
		if time.Now().After(deadline) {
			t.Fatal("a key set with a 50 ms TTL is still there after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}

	srv.Kill()
	start := time.Now()
	if _, _, err := r.Get(ctx, "k"); err == nil {
		t.Error("Get on a stopped server: no error")
	}
	if err := r.Set(ctx, "k", []byte("x"), time.Minute); err == nil {
		t.Error("Set on a stopped server: no error")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("two calls on a stopped server took %v, want them to give up within their timeout", d)
	}
}
