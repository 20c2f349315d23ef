package redisquota

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// TestServerClock: the offset comes from the round trip with the shortest
// time among the latest, aged by the clocks' drift, so that a round trip
// slowed on one way does not misplace the server's time by half of it.
func TestServerClock(t *testing.T) {
	const offset = 5 * time.Second // the server's clock is ahead by this
	type trip struct {
		at        time.Duration // when it was sent, after the filter's base
		out, back time.Duration // the time each way
	}
	for _, tc := range []struct {
		name  string
		trips []trip
		now   time.Duration // when the estimate is asked for
		want  time.Duration // its error: local time − the true local time
	}{
		{"one symmetric", []trip{{0, time.Millisecond, time.Millisecond}}, time.Second, 0},
		// The answer read 40 ms late: taken alone it puts the server's time
		// 20 ms late on the local clock (and a request sent 40 ms late, 20 ms
		// early).
		{"one slowed back", []trip{{0, time.Millisecond, 41 * time.Millisecond}}, time.Second, 20 * time.Millisecond},
		{"one slowed out", []trip{{0, 41 * time.Millisecond, time.Millisecond}}, time.Second, -20 * time.Millisecond},
		{"slowed then quick", []trip{
			{0, time.Millisecond, 41 * time.Millisecond},
			{100 * time.Millisecond, time.Millisecond, time.Millisecond},
			{200 * time.Millisecond, 30 * time.Millisecond, time.Millisecond},
		}, time.Second, 0},
		// A quick sample an hour old has drifted by up to 54 ms: a recent
		// one 10 ms long is better.
		{"old quick, recent slow", []trip{
			{0, time.Millisecond, time.Millisecond},
			{time.Hour, 5 * time.Millisecond, 15 * time.Millisecond},
		}, time.Hour + time.Second, 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newServerClock()
			for _, tr := range tc.trips {
				sent := c.base.Add(tr.at)
				server := sent.Add(tr.out + offset).UnixNano()
				c.observe(sent, sent.Add(tr.out+tr.back), server)
			}
			if got := c.held(); got != len(tc.trips) {
				t.Errorf("held %d, want %d", got, len(tc.trips))
			}
			target := c.base.Add(tc.now + 300*time.Millisecond)
			got, ok := c.local(target.Add(offset).UnixNano(), c.base.Add(tc.now))
			if !ok {
				t.Fatal("local: no estimate")
			}
			if e := got.Sub(target); e != tc.want {
				t.Errorf("error %v, want %v", e, tc.want)
			}
		})
	}
}

// TestServerClockEmpty: no estimate before the first sample, and the
// filter keeps the latest clockSamples.
func TestServerClockEmpty(t *testing.T) {
	c := newServerClock()
	if _, ok := c.local(time.Now().UnixNano(), time.Now()); ok {
		t.Error("local: an estimate with no sample")
	}
	for i := range 2 * clockSamples {
		sent := c.base.Add(time.Duration(i) * time.Millisecond)
		c.observe(sent, sent.Add(time.Millisecond), sent.UnixNano())
	}
	if got := c.held(); got != clockSamples {
		t.Errorf("held %d, want %d", got, clockSamples)
	}
}

// slowRequests is a TCP proxy to addr that holds every other chunk of
// bytes its clients send for delay before passing it on, in order; the
// answers pass at once. A round trip through it is slowed on the way out
// only, every other time, as a busy client's are.
func slowRequests(t *testing.T, addr string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(c, s); c.Close() }()
			go func() {
				defer s.Close()
				buf := make([]byte, 64<<10)
				for i := 0; ; i++ {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if i%2 == 1 {
						time.Sleep(delay)
					}
					if _, err := s.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestReserveSlowRequests: slots land where the server put them on the
// caller's clock even when every other request reaches Redis 150 ms late.
// Redis runs on this machine, so its clock is the local one, and a
// reservation's Stamp says where its first slot really is. Taken as the
// middle of each round trip (the estimate before the clock filter), the
// slowed reservations' slots would land 75 ms early, inside the slots of
// the workers before them.
func TestReserveSlowRequests(t *testing.T) {
	const delay = 150 * time.Millisecond
	r := services.StartRedis(t)
	q, err := New(Config{Addr: slowRequests(t, r.Addr, delay), Rate: quota.Rate{N: 10, Per: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	for i := range 8 {
		now := time.Now()
		res, err := q.Reserve(ctx, fmt.Sprintf("k%d", i), 2, now)
		if err != nil {
			t.Fatal(err)
		}
		if res.Granted != 2 {
			t.Fatalf("reservation %d: granted %d, want 2", i, res.Granted)
		}
		truth := time.Unix(0, res.Stamp-int64(res.Granted)*int64(res.Spacing))
		// res.First is on the monotonic clock from now; truth on the wall
		// clock: compare both as wall times.
		off := res.First.Round(0).Sub(truth)
		if off < -delay/5 || off > delay/5 {
			t.Errorf("reservation %d: first slot %v off where Redis put it, want within %v", i, off, delay/5)
		}
	}
}
