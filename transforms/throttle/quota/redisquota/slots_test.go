package redisquota_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
)

// Redis hands out slots.
var _ quota.Reserver = (*redisquota.Quota)(nil)

// newSlotsRedis returns a Redis quota over the server at addr with its own
// client, as a worker has, closed when t ends.
func newSlotsRedis(t *testing.T, addr string, rate quota.Rate, lead, horizon time.Duration) *redisquota.Quota {
	t.Helper()
	q, err := redisquota.New(redisquota.Config{Addr: addr, Rate: rate, Lead: lead, Horizon: horizon})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// rawClient returns a client to look at the server's keys.
func rawClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// serverFirst is where r's first slot starts on the server's clock, in
// Unix nanoseconds: its Stamp is where it ends.
func serverFirst(r quota.Reservation) int64 {
	return r.Stamp - int64(r.Granted)*int64(r.Spacing)
}

// TestRedisSlotsWorkers has three workers, each with its own client,
// reserve slots of one key concurrently, use the first half of each
// reservation and give back the rest: on the server's clock, no two slots
// used, by any of them, are closer than 1 ÷ rate. Each reservation is
// also placed on the worker's clock within the lead and the horizon of
// when it was asked, plus the round trip.
func TestRedisSlotsWorkers(t *testing.T) {
	r := services.StartRedis(t)
	const workers, rounds = 3, 40
	rate := quota.Rate{N: 1000, Per: time.Second} // spacing 1 ms
	lead, horizon := 20*time.Millisecond, 50*time.Millisecond
	var mu sync.Mutex
	var used []int64 // server times of the slots used
	var wg sync.WaitGroup
	for w := range workers {
		q := newSlotsRedis(t, r.Addr, rate, lead, horizon)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			ctx := context.Background()
			for range rounds {
				now := time.Now()
				n := 1 + rng.IntN(8)
				res, err := q.Reserve(ctx, "workers", n, now)
				if err != nil {
					t.Error(err)
					return
				}
				done := time.Now()
				if res.Granted < 0 || res.Granted > n || res.Spacing != time.Millisecond {
					t.Errorf("Reserve(%d) = %+v", n, res)
					return
				}
				if res.First.Before(now.Add(lead)) || (res.Granted > 0 && res.First.After(done.Add(horizon))) {
					t.Errorf("Reserve(%d) asked at %v, answered at %v: first slot at %v, want within [now+lead, answer+horizon]", n, now, done, res.First)
				}
				use := (res.Granted + 1) / 2
				mu.Lock()
				for i := range use {
					used = append(used, serverFirst(res)+int64(i)*int64(res.Spacing))
				}
				mu.Unlock()
				if _, err := q.Release(ctx, "workers", res, res.Granted-use, time.Now()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(used)
	for i := 1; i < len(used); i++ {
		if d := time.Duration(used[i] - used[i-1]); d < time.Millisecond {
			t.Fatalf("slots %d and %d of %d used are %v apart on the server's clock, want at least 1ms", i-1, i, len(used), d)
		}
	}
	// The horizon beyond the lead holds 31 slots; what blocks it is used
	// (half of each reservation, rounded up) or lapsed (the other half).
	if len(used) < 15 {
		t.Errorf("%d slots used, want at least 15", len(used))
	}
}

// TestRedisSlotsRelease gives back on the server: the TAT moves back by the
// unused units when the reservation is the last one, and not at all when a
// later one was made or the reservation has ended. The next reservation's
// first slot, on the server's clock, shows where the TAT stands. A slot is
// 6 s long, so that the verdicts do not depend on how fast the calls run.
func TestRedisSlotsRelease(t *testing.T) {
	r := services.StartRedis(t)
	rate := quota.Rate{N: 10, Per: time.Minute}
	const sp = int64(6 * time.Second)
	type op struct {
		reserve int // units to reserve, or 0 to release
		of      int // index of the reservation to release
		unused  int
		want    int // units given back
	}
	tests := []struct {
		name string
		ops  []op
		next func(rs []quota.Reservation) int64 // first slot of a last Reserve(1)
	}{
		{"last", []op{{reserve: 5}, {of: 0, unused: 3, want: 3}},
			func(rs []quota.Reservation) int64 { return rs[0].Stamp - 3*sp }},
		{"not last", []op{{reserve: 5}, {reserve: 2}, {of: 0, unused: 3, want: 0}},
			func(rs []quota.Reservation) int64 { return rs[1].Stamp }},
		{"last again", []op{{reserve: 5}, {reserve: 2}, {of: 1, unused: 2, want: 2}, {of: 0, unused: 3, want: 3}},
			func(rs []quota.Reservation) int64 { return rs[0].Stamp - 3*sp }},
		{"twice", []op{{reserve: 5}, {of: 0, unused: 2, want: 2}, {of: 0, unused: 2, want: 0}},
			func(rs []quota.Reservation) int64 { return rs[0].Stamp - 2*sp }},
		{"more than granted", []op{{reserve: 3}, {reserve: 2}, {of: 1, unused: 7, want: 2}},
			func(rs []quota.Reservation) int64 { return rs[0].Stamp }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newSlotsRedis(t, r.Addr, rate, 0, time.Minute)
			ctx := context.Background()
			key := "release-" + strings.ReplaceAll(tc.name, " ", "-")
			var rs []quota.Reservation
			for i, o := range tc.ops {
				if o.reserve > 0 {
					res, err := q.Reserve(ctx, key, o.reserve, time.Now())
					if err != nil || res.Granted != o.reserve {
						t.Fatalf("op %d: Reserve(%d) = %+v, %v; want all granted", i, o.reserve, res, err)
					}
					if i > 0 && o.reserve > 0 && serverFirst(res) != rs[len(rs)-1].Stamp {
						t.Fatalf("op %d: Reserve(%d) starts at %d, want where the last ended, %d", i, o.reserve, serverFirst(res), rs[len(rs)-1].Stamp)
					}
					rs = append(rs, res)
					continue
				}
				back, err := q.Release(ctx, key, rs[o.of], o.unused, time.Now())
				if err != nil || back != o.want {
					t.Errorf("op %d: Release(#%d, %d) = %d, %v; want %d", i, o.of, o.unused, back, err, o.want)
				}
			}
			res, err := q.Reserve(ctx, key, 1, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := serverFirst(res), tc.next(rs); got != want {
				t.Errorf("next Reserve(1) starts at %d, want %d (%v off)", got, want, time.Duration(got-want))
			}
		})
	}
}

// TestRedisSlotsPassed gives back slots some of which have passed, and a
// reservation that has ended: only the slots still ahead are given back.
// The sleeps only make sure that time has passed.
func TestRedisSlotsPassed(t *testing.T) {
	r := services.StartRedis(t)
	q := newSlotsRedis(t, r.Addr, quota.Rate{N: 100, Per: time.Second}, 20*time.Millisecond, time.Second)
	ctx := context.Background()

	// Slots at 20, 30, ..., 60 ms; at 45 ms or later, two at most are ahead.
	res, err := q.Reserve(ctx, "passed", 5, time.Now())
	if err != nil || res.Granted != 5 {
		t.Fatalf("Reserve(5) = %+v, %v; want 5 granted", res, err)
	}
	time.Sleep(45 * time.Millisecond)
	if back, err := q.Release(ctx, "passed", res, 5, time.Now()); err != nil || back > 2 {
		t.Errorf("Release(5) 45 ms later = %d, %v; want at most 2", back, err)
	}

	res, err = q.Reserve(ctx, "ended", 1, time.Now())
	if err != nil || res.Granted != 1 {
		t.Fatalf("Reserve(1) = %+v, %v; want 1 granted", res, err)
	}
	time.Sleep(40 * time.Millisecond)
	if back, err := q.Release(ctx, "ended", res, 1, time.Now()); err != nil || back != 0 {
		t.Errorf("Release(1) after the slot = %d, %v; want 0", back, err)
	}
}

// TestRedisSlotsHorizon: a reservation reaching beyond the horizon is
// granted in part, with RetryAt when the next unit falls within it; one
// whose first slot is beyond it is granted nothing. Slots of 6 s keep the
// counts apart from how fast the calls run.
func TestRedisSlotsHorizon(t *testing.T) {
	r := services.StartRedis(t)
	q := newSlotsRedis(t, r.Addr, quota.Rate{N: 10, Per: time.Minute}, 0, 20*time.Second)
	ctx := context.Background()
	start := time.Now()
	// Slots at 20 ms, 6.02 s, 12.02 s, 18.02 s: four start within 20 s.
	res, err := q.Reserve(ctx, "horizon", 10, start)
	if err != nil || res.Granted != 4 {
		t.Fatalf("Reserve(10) = %+v, %v; want 4 granted", res, err)
	}
	if want := res.First.Add(4*res.Spacing - 20*time.Second); !res.RetryAt.Equal(want) {
		t.Errorf("RetryAt = %v, want %v", res.RetryAt, want)
	}
	// The next free slot is placed on our clock within the time the two
	// round trips took of where the first reservation ended.
	next, err := q.Reserve(ctx, "horizon", 1, time.Now())
	end, slop := res.First.Add(4*res.Spacing), time.Since(start)
	if err != nil || next.Granted != 0 || next.Stamp != 0 || next.First.Sub(end).Abs() > slop {
		t.Errorf("Reserve(1) beyond the horizon = %+v, %v; want nothing granted, the next free slot within %v of %v", next, err, slop, end)
	}
	if res, err := q.Reserve(ctx, "horizon", 0, time.Now()); err != nil || res != (quota.Reservation{}) {
		t.Errorf("Reserve(0) = %+v, %v; want the zero Reservation", res, err)
	}
}

// TestRedisSlotsKeys: Reserve keeps its TAT under its own key, which expires
// once the TAT has passed; Take's key is apart and Take works as before.
func TestRedisSlotsKeys(t *testing.T) {
	r := services.StartRedis(t)
	q := newSlotsRedis(t, r.Addr, quota.Rate{N: 1000, Per: time.Second}, 20*time.Millisecond, time.Second)
	c := rawClient(t, r.Addr)
	ctx := context.Background()
	if g, err := q.Take(ctx, "k", 3, time.Now()); err != nil || g.Granted != 3 {
		t.Fatalf("Take(3) = %+v, %v; want 3 granted", g, err)
	}
	res, err := q.Reserve(ctx, "k", 2, time.Now())
	if err != nil || res.Granted != 2 {
		t.Fatalf("Reserve(2) = %+v, %v; want 2 granted", res, err)
	}
	if n, err := c.Exists(ctx, "rate:k", "slots:k").Result(); err != nil || n != 2 {
		t.Fatalf("EXISTS rate:k slots:k = %d, %v; want 2", n, err)
	}
	// The TAT is 22 ms ahead: the key lives until then, rounded up to the
	// millisecond, and no longer.
	ttl, err := c.PTTL(ctx, "slots:k").Result()
	if err != nil || ttl <= 0 || ttl > 23*time.Millisecond {
		t.Fatalf("PTTL slots:k = %v, %v; want within (0, 23ms]", ttl, err)
	}
	time.Sleep(ttl + 10*time.Millisecond)
	if n, err := c.Exists(ctx, "slots:k").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS slots:k after its TTL = %d, %v; want 0", n, err)
	}
	if g, err := q.Take(ctx, "k", 1, time.Now()); err != nil || g.Granted != 1 {
		t.Errorf("Take(1) = %+v, %v; want 1 granted", g, err)
	}
}

// TestRedisSlotsErrors: a server that does not answer makes Reserve and
// Release fail within ctx's deadline, with errors.Is finding it; a killed
// server makes them fail too, and a restarted one serves again.
func TestRedisSlotsErrors(t *testing.T) {
	rate := quota.Rate{N: 10, Per: time.Second}
	held := quota.Reservation{Granted: 2, Spacing: 100 * time.Millisecond, Stamp: time.Now().Add(time.Second).UnixNano()}

	t.Run("silent", func(t *testing.T) {
		q := newSlotsRedis(t, silentPeer(t), rate, 0, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		res, err := q.Reserve(ctx, "k", 1, time.Now())
		if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "redisquota: reserving") {
			t.Errorf("Reserve from a server that never answers = %+v, %v; want a redisquota error with context.DeadlineExceeded", res, err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		back, err := q.Release(ctx, "k", held, 2, time.Now())
		if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "redisquota: giving back") {
			t.Errorf("Release to a server that never answers = %d, %v; want a redisquota error with context.DeadlineExceeded", back, err)
		}
	})

	t.Run("killed and restarted", func(t *testing.T) {
		r := services.StartRedis(t)
		q := newSlotsRedis(t, r.Addr, rate, 0, 0)
		ctx := context.Background()
		if _, err := q.Reserve(ctx, "k", 1, time.Now()); err != nil {
			t.Fatal(err)
		}
		r.Kill()
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if res, err := q.Reserve(ctx, "k", 1, time.Now()); err == nil {
			t.Fatalf("Reserve with the server killed = %+v, want an error", res)
		}
		if back, err := q.Release(ctx, "k", held, 2, time.Now()); err == nil {
			t.Fatalf("Release with the server killed = %d, want an error", back)
		}
		r.Restart(t) // empty: the scripts are loaded again
		if res, err := q.Reserve(context.Background(), "k", 1, time.Now()); err != nil || res.Granted != 1 {
			t.Fatalf("Reserve after restart = %+v, %v; want 1 granted", res, err)
		}
	})
}

func TestNewRefusesSlots(t *testing.T) {
	rate := quota.Rate{N: 10, Per: time.Second}
	tests := []struct {
		name string
		cfg  redisquota.Config
	}{
		{"negative lead", redisquota.Config{Addr: "localhost:6379", Rate: rate, Lead: -time.Millisecond}},
		{"negative horizon", redisquota.Config{Addr: "localhost:6379", Rate: rate, Horizon: -time.Second}},
		{"horizon before lead", redisquota.Config{Addr: "localhost:6379", Rate: rate, Lead: time.Second, Horizon: time.Millisecond}},
	}
	for _, tc := range tests {
		if q, err := redisquota.New(tc.cfg); err == nil {
			q.Close()
			t.Errorf("%s: New(%+v) succeeded, want an error", tc.name, tc.cfg)
		}
	}
}

// TestRedisSlotsShares has a high-tier and a low-tier worker, each with its
// own client, reserve slots of one key for 2 s, asking every 20 ms for
// ten units, the high worker first: with a share of 0.9 kept for the high
// tier, the low worker is held to a tenth of the rate while the high one
// sends, and has the whole rate once the high tier's mark lapses. The
// bounds hold however slowly the workers run: the low worker's is the cap
// itself, and the high worker needs only ask once per horizon.
func TestRedisSlotsShares(t *testing.T) {
	r := services.StartRedis(t)
	rate := quota.Rate{N: 100, Per: time.Second} // spacing 10 ms; the low tier's cap 10/s
	newQ := func() *redisquota.Quota {
		q, err := redisquota.New(redisquota.Config{Addr: r.Addr, Rate: rate, Shares: quota.Shares{High: 0.9}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		return q
	}
	run := func(key string, tiers ...int) []int {
		got := make([]int, len(tiers))
		var wg sync.WaitGroup
		end := time.Now().Add(2 * time.Second)
		for i, tier := range tiers {
			q := newQ()
			// The first worker has asked once before the others begin.
			res, err := q.ReserveTier(context.Background(), key, tier, 1, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got[i] += res.Granted
			wg.Go(func() {
				for time.Now().Before(end) {
					res, err := q.ReserveTier(context.Background(), key, tier, 10, time.Now())
					if err != nil {
						t.Error(err)
						return
					}
					got[i] += res.Granted
					time.Sleep(20 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		return got
	}

	got := run("both", quota.TierHigh, quota.TierLow)
	t.Logf("high %d, low %d", got[0], got[1])
	// 2 s at 10/s, the cap's first horizon (11) and one more.
	if got[1] > 32 {
		t.Errorf("low tier granted %d with the high tier sending, want at most 32", got[1])
	}
	if got[0] < 100 {
		t.Errorf("high tier granted %d, want at least 100", got[0])
	}
	ttl, err := rawClient(t, r.Addr).PTTL(context.Background(), "slots:both:active:high").Result()
	if err != nil || ttl <= 0 || ttl > quota.ActiveFor {
		t.Errorf("the high tier's mark expires in %v (%v), want within %v", ttl, err, quota.ActiveFor)
	}

	got = run("alone", quota.TierLow)
	if got[0] < 100 {
		t.Errorf("low tier alone granted %d, want at least 100", got[0])
	}
	if n, err := rawClient(t, r.Addr).Exists(context.Background(), "slots:alone:active:low", "slots:alone:below:high").Result(); err != nil || n != 0 {
		t.Errorf("the low tier alone left %d tier keys (%v), want none", n, err)
	}
}
