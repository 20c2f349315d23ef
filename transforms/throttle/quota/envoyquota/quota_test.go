package envoyquota_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota/envoyquota"
)

// Quota is a quota.Quota whose permits lapse with their window.
var (
	_ quota.Quota    = (*envoyquota.Quota)(nil)
	_ quota.Windowed = (*envoyquota.Quota)(nil)
)

// The limits of testdata/ratelimit/config/beamthrottle.yaml.
const (
	domain     = "beamthrottle"
	dayLimit   = 10 // test_day=*
	tenantDay  = 5  // tenant=acme, test_day=*
	dayEntry   = "test_day"
	tenantKey  = "tenant"
	tenantName = "acme"
)

// startRateLimit starts Redis and the rate-limit service over it, first
// waiting out the end of the service's day window if it is less than a
// minute away, so that each test's requests fall in one window.
func startRateLimit(t *testing.T) *services.RateLimit {
	t.Helper()
	now := time.Now()
	if left := dayEnd(now).Sub(now); left < time.Minute {
		t.Logf("waiting %v for the service's day window to end", left)
		time.Sleep(left + time.Second)
	}
	r := services.StartRedis(t)
	return services.StartRateLimit(t, r.Addr, services.RateLimitConfig(t))
}

// dayEnd returns when the service's day window holding t ends: its windows
// are aligned to the Unix epoch, so at the next midnight UTC.
func dayEnd(t time.Time) time.Time {
	return t.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}

func newEnvoy(t *testing.T, cfg envoyquota.Config) *envoyquota.Quota {
	t.Helper()
	q, err := envoyquota.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// counted asks the service, without adding hits (a descriptor hits_addend
// of 0), for the status of entries: its code and the permits left.
func counted(t *testing.T, addr string, entries ...envoyquota.Entry) (rlsv3.RateLimitResponse_Code, uint32) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	d := &ratelimitv3.RateLimitDescriptor{HitsAddend: wrapperspb.UInt64(0)}
	for _, e := range entries {
		d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: e.Key, Value: e.Value})
	}
	resp, err := rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(context.Background(),
		&rlsv3.RateLimitRequest{Domain: domain, Descriptors: []*ratelimitv3.RateLimitDescriptor{d}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetOverallCode(), resp.GetStatuses()[0].GetLimitRemaining()
}

// step is one Take and what it should answer; retryAtDayEnd means RetryAt at
// the end of the day window (within 2 s: the service counts whole seconds).
type step struct {
	quota         int // which of the test's quotas takes
	n             int
	granted       int
	retryAtDayEnd bool
}

func runSteps(t *testing.T, qs []*envoyquota.Quota, key string, steps []step) {
	t.Helper()
	for i, s := range steps {
		now := time.Now()
		g, err := qs[s.quota].Take(context.Background(), key, s.n, now)
		if err != nil {
			t.Fatalf("step %d: Take(%d): %v", i, s.n, err)
		}
		if g.Granted != s.granted {
			t.Errorf("step %d: quota %d Take(%d) granted %d, want %d", i, s.quota, s.n, g.Granted, s.granted)
		}
		switch {
		case s.retryAtDayEnd:
			if d := g.RetryAt.Sub(dayEnd(now)).Abs(); d > 2*time.Second {
				t.Errorf("step %d: Take(%d) RetryAt %v, want the end of the day window %v", i, s.n, g.RetryAt, dayEnd(now))
			}
		case !g.RetryAt.IsZero():
			t.Errorf("step %d: Take(%d) RetryAt %v, want zero", i, s.n, g.RetryAt)
		}
	}
}

// TestEnvoyGrants runs Takes against the real service and checks grants,
// RetryAt, and the service's own count.
func TestEnvoyGrants(t *testing.T) {
	rl := startRateLimit(t)
	byKey := envoyquota.Config{Addr: rl.Addr, Domain: domain, KeyEntry: dayEntry}
	tests := []struct {
		name   string
		cfg    envoyquota.Config
		quotas int
		steps  []step
		left   uint32 // permits the service has left afterwards
		over   bool   // whether its counter is past the limit
	}{
		{
			// The last answer's limit_remaining caps the next ask, so the
			// window is spent exactly; then Take answers without asking.
			name: "remaining caps the ask", cfg: byKey, quotas: 1,
			steps: []step{{0, 4, 4, false}, {0, 4, 4, false}, {0, 4, 2, true}, {0, 1, 0, true}},
			left:  0,
		},
		{
			// A second client that knows nothing asks for more than is left:
			// granted what is left (its chunks of one permit each are granted
			// in order until the window is spent), and the service counts
			// the refused chunk too. Its next Take is answered without
			// asking, so the count does not grow.
			name: "partial grant", cfg: byKey, quotas: 2,
			steps: []step{{0, 8, 8, false}, {1, 3, 2, true}, {1, 1, 0, true}},
			over:  true,
		},
		{
			// Before it knows the limit, a client asks for all of a batch
			// larger than the limit and is granted the limit.
			name: "more than the limit", cfg: byKey, quotas: 1,
			steps: []step{{0, 50, 10, true}, {0, 1, 0, true}},
			over:  true,
		},
		{
			// Chunks of 2 (100 permits in 50 chunks, MaxChunks 64): the
			// limit of 10 is granted in 5 chunks.
			name: "chunks of two", cfg: byKey, quotas: 1,
			steps: []step{{0, 100, 10, true}},
			over:  true,
		},
		{
			// Chunks of 2 again, and 3 left: one chunk is granted, and the
			// last permit of the window is lost to the refused chunk.
			name: "chunk larger than what is left", cfg: byKey, quotas: 2,
			steps: []step{{0, 7, 7, false}, {1, 100, 2, true}},
			over:  true,
		},
		{
			name: "ask capped", cfg: byKey, quotas: 1,
			steps: []step{{0, 3, 3, false}, {0, 50, 7, true}},
			left:  0,
		},
		{
			name:   "nested entries",
			cfg:    envoyquota.Config{Addr: rl.Addr, Domain: domain, Entries: []envoyquota.Entry{{tenantKey, tenantName}}, KeyEntry: dayEntry},
			quotas: 1,
			steps:  []step{{0, 3, 3, false}},
			left:   tenantDay - 3,
		},
		{
			name:   "no limit matches",
			cfg:    envoyquota.Config{Addr: rl.Addr, Domain: domain, Entries: []envoyquota.Entry{{"unconfigured", "x"}}},
			quotas: 1,
			steps:  []step{{0, 1000, 1000, false}, {0, 1000, 1000, false}},
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var qs []*envoyquota.Quota
			for range tc.quotas {
				qs = append(qs, newEnvoy(t, tc.cfg))
			}
			key := fmt.Sprintf("grants-%d", i)
			runSteps(t, qs, key, tc.steps)
			if tc.cfg.KeyEntry == "" {
				return
			}
			entries := append(append([]envoyquota.Entry(nil), tc.cfg.Entries...), envoyquota.Entry{Key: tc.cfg.KeyEntry, Value: key})
			code, left := counted(t, rl.Addr, entries...)
			if over := code == rlsv3.RateLimitResponse_OVER_LIMIT; over != tc.over || (!over && left != tc.left) {
				t.Errorf("service afterwards: %v with %d left, want over limit %v, %d left", code, left, tc.over, tc.left)
			}
		})
	}
}

// TestEnvoySharedKey has clients take from one key in turns: together they
// are never granted more than the limit of the window.
func TestEnvoySharedKey(t *testing.T) {
	rl := startRateLimit(t)
	cfg := envoyquota.Config{Addr: rl.Addr, Domain: domain, KeyEntry: dayEntry}
	qs := []*envoyquota.Quota{newEnvoy(t, cfg), newEnvoy(t, cfg), newEnvoy(t, cfg)}
	total := 0
	for i := range 30 {
		g, err := qs[i%len(qs)].Take(context.Background(), "shared", 1+i%2, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		total += g.Granted
	}
	if total > dayLimit {
		t.Errorf("granted %d in all, want at most %d", total, dayLimit)
	}
	// Each client asks for 1 or 2 permits in chunks of 1: the window is
	// spent to the permit.
	if total != dayLimit {
		t.Errorf("granted %d in all, want %d", total, dayLimit)
	}
}

// TestEnvoyErrors: a service that is down, does not answer, or was
// restarted.
func TestEnvoyErrors(t *testing.T) {
	t.Run("nothing listening", func(t *testing.T) {
		q := newEnvoy(t, envoyquota.Config{Addr: closedPort(t), Domain: domain, KeyEntry: dayEntry})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if g, err := q.Take(ctx, "k", 1, time.Now()); err == nil {
			t.Fatalf("Take = %+v, want an error", g)
		}
		if ctx.Err() != nil {
			t.Errorf("Take ran into the 10 s deadline, want a prompt error")
		}
	})
	t.Run("silent", func(t *testing.T) {
		q := newEnvoy(t, envoyquota.Config{Addr: services.StartSilent(t).Addr, Domain: domain, KeyEntry: dayEntry})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if g, err := q.Take(ctx, "k", 1, time.Now()); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Take = %+v, %v; want context.DeadlineExceeded", g, err)
		}
	})
	t.Run("killed and restarted", func(t *testing.T) {
		rl := startRateLimit(t)
		q := newEnvoy(t, envoyquota.Config{Addr: rl.Addr, Domain: domain, KeyEntry: dayEntry})
		if g, err := q.Take(context.Background(), "restart", 2, time.Now()); g.Granted != 2 || err != nil {
			t.Fatalf("Take = %+v, %v; want 2 granted", g, err)
		}
		rl.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if g, err := q.Take(ctx, "restart", 2, time.Now()); err == nil {
			t.Fatalf("Take with the service killed = %+v, want an error", g)
		}
		rl.Restart(t)
		// gRPC reconnects after a backoff (New caps it at 2 s); the
		// counters, in Redis, survived: 8 are left.
		deadline := time.Now().Add(30 * time.Second)
		for {
			g, err := q.Take(context.Background(), "restart", 8, time.Now())
			if err == nil {
				if g.Granted != 8 {
					t.Errorf("Take(8) after restart granted %d, want 8", g.Granted)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Take after restart still fails after 30 s: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
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

func TestParseEntries(t *testing.T) {
	tests := []struct {
		in      string
		want    []envoyquota.Entry
		wantErr bool
	}{
		{"quota=translate", []envoyquota.Entry{{"quota", "translate"}}, false},
		{"quota=translate,project=p1", []envoyquota.Entry{{"quota", "translate"}, {"project", "p1"}}, false},
		{" quota = translate , project=p1 ", []envoyquota.Entry{{"quota", "translate"}, {"project", "p1"}}, false},
		{"path=/a=b", []envoyquota.Entry{{"path", "/a=b"}}, false},
		{"", nil, true},
		{"  ", nil, true},
		{"quota", nil, true},
		{"=x", nil, true},
		{"quota=", nil, true},
		{"quota=a,", nil, true},
		{"quota=a,,b=c", nil, true},
	}
	for _, tc := range tests {
		got, err := envoyquota.ParseEntries(tc.in)
		if (err != nil) != tc.wantErr || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ParseEntries(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  envoyquota.Config
	}{
		{"no address", envoyquota.Config{Domain: domain, KeyEntry: dayEntry}},
		{"no domain", envoyquota.Config{Addr: "localhost:8081", KeyEntry: dayEntry}},
		{"no descriptor", envoyquota.Config{Addr: "localhost:8081", Domain: domain}},
		{"empty value", envoyquota.Config{Addr: "localhost:8081", Domain: domain, Entries: []envoyquota.Entry{{"k", ""}}}},
	}
	for _, tc := range tests {
		if q, err := envoyquota.New(tc.cfg); err == nil {
			q.Close()
			t.Errorf("%s: New(%+v) succeeded, want an error", tc.name, tc.cfg)
		}
	}
}

// Take of nothing asks nothing.
func TestTakeNothing(t *testing.T) {
	e := newEnvoy(t, envoyquota.Config{Addr: closedPort(t), Domain: domain, KeyEntry: dayEntry})
	for _, n := range []int{0, -1} {
		if g, err := e.Take(context.Background(), "k", n, time.Now()); g != (quota.Grant{}) || err != nil {
			t.Errorf("Take(%d) = %+v, %v; want nothing, nil", n, g, err)
		}
	}
}

// TestEnvoyWindowEnd: the window's end is unknown until an answer names the
// limit, then it is the end the service gave, and later ones follow on the
// limit's unit, aligned on the Unix epoch.
func TestEnvoyWindowEnd(t *testing.T) {
	rl := startRateLimit(t)
	q := newEnvoy(t, envoyquota.Config{Addr: rl.Addr, Domain: domain, KeyEntry: dayEntry})
	perSecond := newEnvoy(t, envoyquota.Config{Addr: rl.Addr, Domain: domain, Entries: []envoyquota.Entry{{"bench", "shared"}}, KeyEntry: "key"})
	now := time.Now()
	if end := q.WindowEnd("window", now); !end.IsZero() {
		t.Errorf("WindowEnd before any answer = %v, want zero", end)
	}
	for _, tc := range []struct {
		name string
		q    *envoyquota.Quota
		end  time.Time // of the window holding now
		unit time.Duration
	}{
		{"day", q, dayEnd(now), 24 * time.Hour},
		{"second", perSecond, now.Truncate(time.Second).Add(time.Second), time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.q.Take(context.Background(), "window", 1, now); err != nil {
				t.Fatal(err)
			}
			if got := tc.q.WindowEnd("window", now); !got.Equal(tc.end) {
				t.Errorf("WindowEnd(now) = %v, want %v", got, tc.end)
			}
			later := tc.end.Add(2*tc.unit + tc.unit/2)
			if got, want := tc.q.WindowEnd("window", later), tc.end.Add(3*tc.unit); !got.Equal(want) {
				t.Errorf("WindowEnd(%v) = %v, want %v", later, got, want)
			}
		})
	}
}
