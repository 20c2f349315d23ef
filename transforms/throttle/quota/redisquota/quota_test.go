package redisquota_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
)

// Quota is a quota.Quota.
var _ quota.Quota = (*redisquota.Quota)(nil)

// newRedis returns a Redis quota over the server at addr, closed when t ends.
func newRedis(t *testing.T, addr string, rate quota.Rate, burst int) *redisquota.Quota {
	t.Helper()
	q, err := redisquota.New(redisquota.Config{Addr: addr, Rate: rate, Burst: burst})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// TestRedisPartialGrant asks for more than the bucket holds: Take grants what
// it holds and says when the next permit comes, one emission interval later.
// On a fresh key the script's arithmetic is exact for these rates, so the
// counts are too.
func TestRedisPartialGrant(t *testing.T) {
	r := services.StartRedis(t)
	tests := []struct {
		rate  string
		burst int
		ask   int
		want  int
		next  time.Duration // from now to RetryAt
	}{
		{"5/m", 5, 10, 5, 12 * time.Second},
		{"2/s", 2, 5, 2, 500 * time.Millisecond},
		{"2/m", 2, 5, 2, 30 * time.Second},
		{"2/h", 2, 5, 2, 30 * time.Minute},
		{"600/m", 0, 100, 10, 100 * time.Millisecond}, // default burst: one second's worth
		{"36000/h", 0, 100, 10, 100 * time.Millisecond},
		{"60/m", 0, 3, 1, time.Second},
		{"5/m", 5, 5, 5, 0}, // all granted: no RetryAt
		{"5/m", 5, 3, 3, 0},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprintf("%s_burst%d_ask%d", tc.rate, tc.burst, tc.ask), func(t *testing.T) {
			rate, err := quota.ParseRate(tc.rate)
			if err != nil {
				t.Fatal(err)
			}
			q := newRedis(t, r.Addr, rate, tc.burst)
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) // only places RetryAt
			g, err := q.Take(context.Background(), fmt.Sprintf("partial-%d", i), tc.ask, now)
			if err != nil {
				t.Fatal(err)
			}
			want := quota.Grant{Granted: tc.want}
			if tc.next > 0 {
				want.RetryAt = now.Add(tc.next)
			}
			if g != want {
				t.Errorf("Take(%d) = %+v, want %+v", tc.ask, g, want)
			}
		})
	}
}

// TestRedisRefusesUntilRetryAt empties the bucket, then asks again at once:
// nothing is granted until a whole permit has accrued, and RetryAt says
// when. The verdict holds however slow the machine: what accrued is bounded
// by the time measured.
func TestRedisRefusesUntilRetryAt(t *testing.T) {
	r := services.StartRedis(t)
	rate := quota.Rate{N: 5, Per: time.Minute} // a permit every 12 s
	q := newRedis(t, r.Addr, rate, 5)
	ctx := context.Background()
	start := time.Now()
	if g, err := q.Take(ctx, "refuse", 5, start); g.Granted != 5 || err != nil {
		t.Fatalf("first Take(5) = %+v, %v; want 5 granted", g, err)
	}
	now := time.Now()
	g, err := q.Take(ctx, "refuse", 5, now)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if accrued := int(elapsed / (12 * time.Second)); g.Granted > accrued {
		t.Errorf("second Take(5) %v later granted %d, want at most %d", elapsed, g.Granted, accrued)
	}
	if g.Granted < 5 && (!g.RetryAt.After(now) || g.RetryAt.After(now.Add(12*time.Second))) {
		t.Errorf("second Take(5) at %v: RetryAt %v, want within 12 s after", now, g.RetryAt)
	}
}

// TestRedisSharedKey has two Redis quotas, as two processes would, take from
// one key in parallel: together they are granted the burst, and no more than
// the burst plus what accrued while they ran. Each may hold back less than
// one permit as credit.
func TestRedisSharedKey(t *testing.T) {
	r := services.StartRedis(t)
	rate := quota.Rate{N: 20, Per: time.Hour} // a permit every 3 minutes
	const burst, clients, goroutines, takes = 20, 2, 4, 25
	qs := []*redisquota.Quota{newRedis(t, r.Addr, rate, burst), newRedis(t, r.Addr, rate, burst)}
	start := time.Now()
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for c := range clients {
		for range goroutines {
			wg.Go(func() {
				for i := range takes {
					g, err := qs[c].Take(context.Background(), "shared", 1+i%3, time.Now())
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					total += g.Granted
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	accrued := int(time.Since(start) / (3 * time.Minute))
	if total > burst+accrued || total < burst-clients {
		t.Errorf("%d clients granted %d in all, want between %d and %d", clients, total, burst-clients, burst+accrued)
	}
}

// TestRedisCreditCarriesFractions asks every one and a half emission
// intervals for everything the bucket holds, so that it holds about one and
// a half permits at each Take. AllowAtMost alone would grant one and spend
// the half, losing a third of the quota; with the credit, everything the
// bucket gave is granted. The bounds come from times measured around the
// calls, so they hold however slow the machine (Redis's clock, which the
// script reads, runs with ours); the burst is large enough that a stall of
// up to 10 s loses nothing to a full bucket.
func TestRedisCreditCarriesFractions(t *testing.T) {
	r := services.StartRedis(t)
	const perSec, burst, takes = 100, 1000, 20 // a permit every 10 ms
	q := newRedis(t, r.Addr, quota.Rate{N: perSec, Per: time.Second}, burst)
	ctx := context.Background()
	total := 0
	var firstSent, firstDone, lastSent time.Time
	for i := range takes {
		if i > 0 {
			time.Sleep(15 * time.Millisecond)
		}
		sent := time.Now()
		g, err := q.Take(ctx, "fractions", 1e6, sent)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			firstSent, firstDone = sent, time.Now()
			if g.Granted != burst {
				t.Fatalf("first Take granted %d, want the burst, %d", g.Granted, burst)
			}
		}
		lastSent = sent
		total += g.Granted
	}
	lastDone := time.Now()
	// Between the first and the last script run, at most lastDone-firstSent
	// and at least lastSent-firstDone passed. Granted is at most the burst
	// plus what accrued, and at least that less the credit held (< 1) and
	// the script's truncation (< 1 unit, 1/1000 permit, a call).
	most := burst + int(lastDone.Sub(firstSent).Seconds()*perSec)
	least := burst + int(lastSent.Sub(firstDone).Seconds()*perSec) - 2
	if total > most || total < least {
		t.Errorf("granted %d over %d takes, want between %d and %d", total-burst, takes-1, least-burst, most-burst)
	}
}

// TestRedisErrors: a server that is down or does not answer makes Take fail,
// within ctx's deadline, and a restarted server serves again.
func TestRedisErrors(t *testing.T) {
	rate := quota.Rate{N: 10, Per: time.Second}

	t.Run("killed and restarted", func(t *testing.T) {
		r := services.StartRedis(t)
		q := newRedis(t, r.Addr, rate, 0)
		ctx := context.Background()
		if _, err := q.Take(ctx, "k", 1, time.Now()); err != nil {
			t.Fatal(err)
		}
		r.Kill()
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if g, err := q.Take(ctx, "k", 1, time.Now()); err == nil {
			t.Fatalf("Take with the server killed = %+v, want an error", g)
		}
		r.Restart(t)
		if g, err := q.Take(context.Background(), "k", 1, time.Now()); g.Granted != 1 || err != nil {
			t.Fatalf("Take after restart = %+v, %v; want 1 granted", g, err)
		}
	})

	t.Run("silent", func(t *testing.T) {
		addr := silentPeer(t)
		q := newRedis(t, addr, rate, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		g, err := q.Take(ctx, "k", 1, time.Now())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Take from a server that never answers = %+v, %v; want context.DeadlineExceeded", g, err)
		}
	})
}

// TestRedisLogsThroughSlog: go-redis's own log lines, such as the one of a
// failed dial, go to log/slog's default logger, not straight to stderr.
func TestRedisLogsThroughSlog(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil)))
	defer slog.SetDefault(old)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	q := newRedis(t, refused, quota.Rate{N: 10, Per: time.Second}, 0)
	if g, err := q.Take(context.Background(), "k", 1, time.Now()); err == nil {
		t.Fatalf("Take from a closed port = %+v, want an error", g)
	}
	mu.Lock()
	got := logs.String()
	mu.Unlock()
	if !strings.Contains(got, "level=WARN") || !strings.Contains(got, "failed to dial") || !strings.Contains(got, "logger=go-redis") {
		t.Errorf("slog got %q; want go-redis's warning that it failed to dial", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// silentPeer listens on a loopback port, accepts connections and never
// answers, as a server that hangs does; it returns the address.
func silentPeer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  redisquota.Config
	}{
		{"no rate", redisquota.Config{Addr: "localhost:6379"}},
		{"negative burst", redisquota.Config{Addr: "localhost:6379", Rate: quota.Rate{N: 1, Per: time.Second}, Burst: -1}},
		{"no address", redisquota.Config{Rate: quota.Rate{N: 1, Per: time.Second}}},
		{"too large", redisquota.Config{Addr: "localhost:6379", Rate: quota.Rate{N: 1 << 31, Per: time.Hour}}},
	}
	for _, tc := range tests {
		if q, err := redisquota.New(tc.cfg); err == nil {
			q.Close()
			t.Errorf("%s: New(%+v) succeeded, want an error", tc.name, tc.cfg)
		}
	}
}

// closedPort returns a loopback address on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	addr, err := services.ClosedAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// Take of nothing asks nothing.
func TestTakeNothing(t *testing.T) {
	r, err := redisquota.New(redisquota.Config{Addr: closedPort(t), Rate: quota.Rate{N: 1, Per: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, n := range []int{0, -1} {
		if g, err := r.Take(context.Background(), "k", n, time.Now()); g != (quota.Grant{}) || err != nil {
			t.Errorf("Take(%d) = %+v, %v; want nothing, nil", n, g, err)
		}
	}
}

func TestDefaultBurst(t *testing.T) {
	tests := []struct {
		rate string
		want int
	}{
		{"600/m", 10},
		{"10/s", 10},
		{"36000/h", 10},
		{"601/m", 11},
		{"60/m", 1},
		{"1/h", 1},
		{"5/2s", 3},
		{"1000000/s", 1000000},
	}
	for _, tc := range tests {
		r, err := quota.ParseRate(tc.rate)
		if err != nil {
			t.Fatal(err)
		}
		if got := redisquota.DefaultBurst(r); got != tc.want {
			t.Errorf("DefaultBurst(%v) = %d, want %d", r, got, tc.want)
		}
	}
}
