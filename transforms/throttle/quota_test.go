package throttle

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/services"
)

func init() {
	register.Function1x1[Record, bool](maxWaitRecordOK)
}

func maxWaitRecordOK(r Record) bool {
	return r.Outcome == OutcomeClientThrottled && strings.Contains(r.Error, "the max wait (")
}

// quotaRun runs n elements through 4 groups with the shared quota q and a
// max wait of 10 s (on Prism's synthetic clock), and checks conservation:
// every element a success or, past the max wait, client-throttled. It
// returns the successes and the pipeline's result.
func quotaRun(t *testing.T, n int, q QuotaConfig) (int64, beam.PipelineResult) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), clientcall.Echo{}, WithGroups(4), WithQuota(q), WithMaxWait(10*time.Second),
		WithBatchInterval(200*time.Millisecond))
	passert.Empty(s, out.ServerThrottled)
	passert.Empty(s, out.Errors)
	passert.True(s, out.ClientThrottled, maxWaitRecordOK)
	res := runPipeline(t, p, true)
	ok, ct := counter(t, res, MetricAccepted), counter(t, res, MetricClientThrottled)
	if ok+ct != int64(n) {
		t.Errorf("success %d + client-throttled %d, want %d", ok, ct, n)
	}
	return ok, res
}

// TestSharedQuota: the groups of a pipeline together never send more than
// a shared quota grants, on Redis and on Envoy's rate-limit service (both
// real, on loopback). The quota is 50 a day, so the counts do not depend on
// the machine's speed: 50 elements succeed, and the rest wait out the max
// wait.
func TestSharedQuota(t *testing.T) {
	const n, quota = 120, 50
	rd := services.StartRedis(t)
	rls := services.StartRateLimit(t, rd.Addr, services.RateLimitConfig(t))
	for _, tc := range []struct {
		name string
		q    QuotaConfig
	}{
		{"redis", QuotaConfig{Backend: RedisQuota, Addr: rd.Addr, Rate: fmt.Sprintf("%d/24h", quota), Burst: quota}},
		{"envoy", QuotaConfig{Backend: EnvoyQuota, Addr: rls.Addr, Domain: "beamthrottle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.q.Backend == EnvoyQuota {
				// The service's day windows end at midnight UTC: do not straddle one.
				if left := time.Until(time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)); left < time.Minute {
					time.Sleep(left + time.Second)
				}
			}
			tc.q.Key = "pipeline-" + uuid.NewString()
			ok, res := quotaRun(t, n, tc.q)
			if ok != quota {
				t.Errorf("success %d, want the quota's %d", ok, quota)
			}
			if got := counter(t, res, MetricQuotaPermits); got != quota {
				t.Errorf("%s = %d, want %d", MetricQuotaPermits, got, quota)
			}
			if got := counter(t, res, MetricQuotaRequests); got < 2 || got > quota+int64(n) {
				t.Errorf("%s = %d, want a few round trips", MetricQuotaRequests, got)
			}
			if got := counter(t, res, MetricQuotaErrors); got != 0 {
				t.Errorf("%s = %d, want 0", MetricQuotaErrors, got)
			}
		})
	}
}

// TestSharedQuotaUnreachable: with the quota's service down (Redis, or
// Envoy's rate-limit service, killed), failing open sends everything (the
// adaptive throttle alone limits it) and counts the errors; failing closed
// postpones everything until the max wait.
func TestSharedQuotaUnreachable(t *testing.T) {
	const n = 40
	rd := services.StartRedis(t)
	rls := services.StartRateLimit(t, rd.Addr, services.RateLimitConfig(t))
	rls.Kill()
	rd.Kill()
	for _, backend := range []QuotaConfig{
		{Backend: RedisQuota, Addr: rd.Addr, Rate: "10/s"},
		{Backend: EnvoyQuota, Addr: rls.Addr, Domain: "beamthrottle"},
	} {
		for _, tc := range []struct {
			open   bool
			wantOK int64
		}{
			{open: true, wantOK: n},
			{open: false, wantOK: 0},
		} {
			t.Run(fmt.Sprintf("%s fail open %v", backend.Backend, tc.open), func(t *testing.T) {
				q := backend
				q.Key, q.FailOpen, q.Timeout = "down", tc.open, 200*time.Millisecond
				ok, res := quotaRun(t, n, q)
				if ok != tc.wantOK {
					t.Errorf("success %d, want %d", ok, tc.wantOK)
				}
				if got := counter(t, res, MetricQuotaErrors); got == 0 {
					t.Errorf("%s = 0, want the failed round trips", MetricQuotaErrors)
				}
			})
		}
	}
}

// TestPermitsLapse: permits from a quota counted in fixed windows (Envoy's
// service, 60 a second for bench=shared) lapse at the end of their window,
// and the pool asks again; within the window it spends what it holds.
func TestPermitsLapse(t *testing.T) {
	rd := services.StartRedis(t)
	rls := services.StartRateLimit(t, rd.Addr, services.RateLimitConfig(t))
	cfg := QuotaConfig{Backend: EnvoyQuota, Addr: rls.Addr, Key: "lapse-" + uuid.NewString(), Domain: "beamthrottle", Descriptors: "bench=shared"}
	q, err := cfg.newQuota()
	if err != nil {
		t.Fatal(err)
	}
	defer q.(io.Closer).Close()
	p := &permitPool{cfg: cfg, q: q}
	ctx := context.Background()
	now := time.Now()
	end := now.Truncate(time.Second).Add(time.Second)
	steps := []struct {
		at        time.Time
		want      int
		have      int // left in the pool afterwards
		lapse     time.Time
		askedMore bool // a round trip
	}{
		{now, 10, 9, end, true},
		{now.Add(time.Millisecond), 10, 8, end, false},
		{end.Add(-time.Millisecond), 10, 7, end, false},
		{end, 5, 4, end.Add(time.Second), true}, // the 7 lapsed
	}
	for i, s := range steps {
		before := p.lapse
		ok, _ := p.permit(ctx, s.at, 1, s.want, time.Second)
		if !ok {
			t.Fatalf("step %d: no permit", i)
		}
		// A round trip that grants sets when its permits lapse.
		if asked := !p.lapse.Equal(before); asked != s.askedMore {
			t.Errorf("step %d: asked the service %v, want %v", i, asked, s.askedMore)
		}
		if p.have != s.have || !p.lapse.Equal(s.lapse) {
			t.Errorf("step %d: %d permits lapsing at %v, want %d at %v", i, p.have, p.lapse, s.have, s.lapse)
		}
	}
}

func TestQuotaConfigValidate(t *testing.T) {
	tests := []struct {
		q    QuotaConfig
		want string // in the error; "" for none
	}{
		{QuotaConfig{}, ""},
		{QuotaConfig{Backend: NoQuota}, ""},
		{QuotaConfig{Backend: RedisQuota, Addr: "h:1", Key: "k", Rate: "600/m"}, ""},
		{QuotaConfig{Backend: EnvoyQuota, Addr: "h:1", Key: "k", Domain: "d", Descriptors: "a=b,c=d"}, ""},
		{QuotaConfig{Backend: "memcached"}, "WithQuota: Backend: unknown quota backend"},
		{QuotaConfig{Backend: RedisQuota, Addr: "h:1", Key: "k", Rate: "600 per minute"}, "WithQuota: Rate:"},
		{QuotaConfig{Backend: RedisQuota, Addr: "h:1", Key: "k", Rate: "600/m", Burst: -1}, "WithQuota: Burst:"},
		{QuotaConfig{Backend: RedisQuota, Key: "k", Rate: "600/m"}, "WithQuota: Addr: required"},
		{QuotaConfig{Backend: RedisQuota, Addr: "h:1", Rate: "600/m"}, "WithQuota: Key:"},
		{QuotaConfig{Backend: EnvoyQuota, Addr: "h:1", Key: "k"}, "WithQuota: Domain:"},
		{QuotaConfig{Backend: EnvoyQuota, Addr: "h:1", Key: "k", Domain: "d", Descriptors: "a"}, "WithQuota: Descriptors:"},
		{QuotaConfig{Backend: RedisQuota, Addr: "h:1", Key: "k", Rate: "1/s", Timeout: -time.Second}, "WithQuota: Timeout:"},
		{QuotaConfig{Backend: RedisQuota, Addr: "localhost", Key: "k", Rate: "1/s"}, `WithQuota: Addr: want host:port, got "localhost"`},
	}
	for _, tc := range tests {
		err := tc.q.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want nil", tc.q, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want an error containing %q", tc.q, err, tc.want)
		}
	}
}

// TestPermitCosts: a call is charged its cost in permits; one that costs
// more than Redis grants at once (its burst) gathers them over several
// asks, keeping what it got, and is let through once it has them all;
// permits it did not spend go back with unspend.
func TestPermitCosts(t *testing.T) {
	rd := services.StartRedis(t)
	cfg := QuotaConfig{Backend: RedisQuota, Addr: rd.Addr, Key: "cost-" + uuid.NewString(), Rate: "200/s", Burst: 10}
	q, err := cfg.newQuota()
	if err != nil {
		t.Fatal(err)
	}
	defer q.(io.Closer).Close()
	p := &permitPool{cfg: cfg, q: q}
	ctx := context.Background()
	if ok, _ := p.permit(ctx, time.Now(), 4, 4, time.Second); !ok || p.have != 0 {
		t.Fatalf("cost 4 within the burst: ok %v with %d left, want ok with 0", ok, p.have)
	}
	asks := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		asks++
		ok, retryAt := p.permit(ctx, time.Now(), 25, 25, 10*time.Millisecond)
		if ok {
			break
		}
		if p.have >= 25 || time.Now().After(deadline) {
			t.Fatalf("not granted a cost of 25 with %d permits held", p.have)
		}
		time.Sleep(max(time.Until(retryAt), time.Millisecond))
	}
	if asks < 3 || p.have > 10 {
		t.Errorf("cost 25 with a burst of 10: granted after %d asks with %d left over, want at least 3 asks and at most 10 left", asks, p.have)
	}
	left := p.have
	p.unspend(25)
	if p.have != left+25 {
		t.Errorf("unspend(25): %d held, want %d", p.have, left+25)
	}
	if ok, _ := p.permit(ctx, time.Now(), 25, 25, time.Second); !ok || p.have != left {
		t.Errorf("spending unspent permits: ok %v with %d left, want ok with %d, without asking", ok, p.have, left)
	}
}
