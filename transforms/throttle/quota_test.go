package throttle

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/permits"
	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
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
	ok, ct := counter(t, res, metricAccepted), counter(t, res, metricClientThrottled)
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
		{"redis", QuotaConfig{Backend: quotaRedis, Addr: rd.Addr, Rate: fmt.Sprintf("%d/24h", quota), Burst: quota}},
		{"envoy", QuotaConfig{Backend: quotaEnvoy, Addr: rls.Addr, Domain: "beamthrottle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.q.Backend == quotaEnvoy {
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
			if got := counter(t, res, metricQuotaPermits); got != quota {
				t.Errorf("%s = %d, want %d", metricQuotaPermits, got, quota)
			}
			if got := counter(t, res, metricQuotaRequests); got < 2 || got > quota+int64(n) {
				t.Errorf("%s = %d, want a few round trips", metricQuotaRequests, got)
			}
			if got := counter(t, res, metricQuotaErrors); got != 0 {
				t.Errorf("%s = %d, want 0", metricQuotaErrors, got)
			}
		})
	}
}

// TestSharedQuotaUnreachable: with the quota's service down (Redis, or
// Envoy's rate-limit service, killed) or hung (a server that accepts
// connections and never answers), failing open sends everything (the
// adaptive throttle alone limits it) and failing closed postpones
// everything until the max wait. Either way the pool asks the service a few
// times (once, then once per back-off), not once per call or firing, and
// counts the calls it sent without permits.
func TestSharedQuotaUnreachable(t *testing.T) {
	const n = 40
	rd := services.StartRedis(t)
	rls := services.StartRateLimit(t, rd.Addr, services.RateLimitConfig(t))
	rls.Kill()
	rd.Kill()
	silent := services.StartSilent(t)
	for _, backend := range []struct {
		name string
		q    QuotaConfig
	}{
		{"redis killed", QuotaConfig{Backend: quotaRedis, Addr: rd.Addr, Rate: "10/s"}},
		{"envoy killed", QuotaConfig{Backend: quotaEnvoy, Addr: rls.Addr, Domain: "beamthrottle"}},
		{"redis hung", QuotaConfig{Backend: quotaRedis, Addr: silent.Addr, Rate: "10/s"}},
		{"envoy hung", QuotaConfig{Backend: quotaEnvoy, Addr: silent.Addr, Domain: "beamthrottle"}},
	} {
		for _, tc := range []struct {
			open   bool
			wantOK int64
		}{
			{open: true, wantOK: n},
			{open: false, wantOK: 0},
		} {
			t.Run(fmt.Sprintf("%s fail open %v", backend.name, tc.open), func(t *testing.T) {
				q := backend.q
				q.Key, q.FailOpen, q.Timeout = "down", tc.open, 200*time.Millisecond
				ok, res := quotaRun(t, n, q)
				if ok != tc.wantOK {
					t.Errorf("success %d, want %d", ok, tc.wantOK)
				}
				errs, reqs := counter(t, res, metricQuotaErrors), counter(t, res, metricQuotaRequests)
				if errs == 0 {
					t.Errorf("%s = 0, want the failed round trips", metricQuotaErrors)
				}
				// Once, then once per back-off (1, 2, 4, 8, 10 s...) of the
				// wall clock: 20 round trips would take the run 2 minutes.
				if reqs > n/2 || errs > reqs {
					t.Errorf("%s = %d with %d errors, want a few (at most %d), one per back-off", metricQuotaRequests, reqs, errs, n/2)
				}
				if down := counter(t, res, metricQuotaDown); down < 1 || down > reqs {
					t.Errorf("%s = %d, want at least 1 and at most the %d round trips", metricQuotaDown, down, reqs)
				}
				calls := counter(t, res, metricCalls)
				t.Logf("success %d, calls %d, round trips %d, errors %d, failed open %d", ok, calls, reqs, errs, counter(t, res, metricQuotaFailedOpen))
				if got := counter(t, res, metricQuotaFailedOpen); got != calls {
					t.Errorf("%s = %d, want every call (%d)", metricQuotaFailedOpen, got, calls)
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
	cfg := QuotaConfig{Backend: quotaEnvoy, Addr: rls.Addr, Key: "lapse-" + uuid.NewString(), Domain: "beamthrottle", Descriptors: "bench=shared"}
	q, err := cfg.newQuota()
	if err != nil {
		t.Fatal(err)
	}
	defer q.(io.Closer).Close()
	p := newPermitPool(cfg, q)
	ctx := context.Background()
	// The service counts in windows of its wall clock: start early in one,
	// so that the first round trip is answered in the window the steps
	// expect however slow the machine.
	if into := time.Since(time.Now().Truncate(time.Second)); into > 100*time.Millisecond {
		time.Sleep(time.Second - into + 10*time.Millisecond)
	}
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
		before := p.m.Lapse()
		if perm := p.permit(ctx, s.at, tierNormal, 1, s.want, time.Second); !perm.OK() {
			t.Fatalf("step %d: no permit", i)
		}
		// A round trip that grants sets when its permits lapse.
		if asked := !p.m.Lapse().Equal(before); asked != s.askedMore {
			t.Errorf("step %d: asked the service %v, want %v", i, asked, s.askedMore)
		}
		if p.m.Have() != s.have || !p.m.Lapse().Equal(s.lapse) {
			t.Errorf("step %d: %d permits lapsing at %v, want %d at %v", i, p.m.Have(), p.m.Lapse(), s.have, s.lapse)
		}
	}
}

func TestQuotaConfigValidate(t *testing.T) {
	tests := []struct {
		q    QuotaConfig
		want string // in the error; "" for none
	}{
		{QuotaConfig{}, ""},
		{QuotaConfig{Backend: quotaNone}, ""},
		{QuotaConfig{Backend: quotaRedis, Addr: "h:1", Key: "k", Rate: "600/m"}, ""},
		{QuotaConfig{Backend: quotaEnvoy, Addr: "h:1", Key: "k", Domain: "d", Descriptors: "a=b,c=d"}, ""},
		{QuotaConfig{Backend: "memcached"}, "WithQuota: Backend: unknown quota backend"},
		{QuotaConfig{Backend: "memcached"}, "(want none or a registered one: envoy, local, redis)"},
		{QuotaConfig{Backend: quotaEnvoy, Addr: "h:1", Key: "k", Params: map[string]string{"domain": "d"}}, ""},
		{QuotaConfig{Backend: quotaEnvoy, Addr: "h:1", Key: "k", Params: map[string]string{"descriptors": "a=b"}}, "WithQuota: Domain: required"},
		{QuotaConfig{Backend: quotaRedis, Addr: "h:1", Key: "k", Rate: "600 per minute"}, "WithQuota: Rate:"},
		{QuotaConfig{Backend: quotaRedis, Addr: "h:1", Key: "k", Rate: "600/m", Burst: -1}, "WithQuota: Burst:"},
		{QuotaConfig{Backend: quotaRedis, Key: "k", Rate: "600/m"}, "WithQuota: Addr: required"},
		{QuotaConfig{Backend: quotaRedis, Addr: "h:1", Rate: "600/m"}, "WithQuota: Key:"},
		{QuotaConfig{Backend: quotaEnvoy, Addr: "h:1", Key: "k"}, "WithQuota: Domain:"},
		{QuotaConfig{Backend: quotaEnvoy, Addr: "h:1", Key: "k", Domain: "d", Descriptors: "a"}, "WithQuota: Descriptors:"},
		{QuotaConfig{Backend: quotaRedis, Addr: "h:1", Key: "k", Rate: "1/s", Timeout: -time.Second}, "WithQuota: Timeout:"},
		{QuotaConfig{Backend: quotaRedis, Addr: "localhost", Key: "k", Rate: "1/s"}, `WithQuota: Addr: want host:port, got "localhost"`},
		{QuotaConfig{Backend: quotaLocal, Rate: "600/m"}, ""},
		{QuotaConfig{Backend: quotaLocal}, "WithQuota: Rate:"},
		{QuotaConfig{Backend: quotaLocal, Rate: "600/m", Addr: "h:1"}, "WithQuota: Addr: not used"},
		{QuotaConfig{Backend: quotaLocal, Rate: "600/m", HighShare: 0.9, NormalShare: 0.5}, ""},
		{QuotaConfig{Backend: quotaRedis, Addr: "h:1", Key: "k", Rate: "600/m", HighShare: 0.9}, ""},
		{QuotaConfig{Backend: quotaLocal, Rate: "600/m", HighShare: 1}, "WithQuota: HighShare: must be at least 0 and less than 1"},
		{QuotaConfig{Backend: quotaLocal, Rate: "600/m", NormalShare: -0.5}, "WithQuota: NormalShare:"},
		{QuotaConfig{Backend: quotaRedis, Addr: "h:1", Key: "k", Rate: "600/m", Burst: 10, HighShare: 0.9}, "WithQuota: HighShare: needs a quota of time slots"},
		{QuotaConfig{Backend: quotaEnvoy, Addr: "h:1", Key: "k", Domain: "d", NormalShare: 0.1}, "WithQuota: NormalShare: needs a quota of time slots"},
	}
	for _, tc := range tests {
		err := tc.q.validate()
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
// permits it did not spend go back when it settles them unsent.
func TestPermitCosts(t *testing.T) {
	rd := services.StartRedis(t)
	cfg := QuotaConfig{Backend: quotaRedis, Addr: rd.Addr, Key: "cost-" + uuid.NewString(), Rate: "200/s", Burst: 10}
	q, err := cfg.newQuota()
	if err != nil {
		t.Fatal(err)
	}
	defer q.(io.Closer).Close()
	p := newPermitPool(cfg, q)
	ctx := context.Background()
	if perm := p.permit(ctx, time.Now(), tierNormal, 4, 4, time.Second); !perm.OK() || p.m.Have() != 0 {
		t.Fatalf("cost 4 within the burst: ok %v with %d left, want ok with 0", perm.OK(), p.m.Have())
	}
	asks := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		asks++
		perm := p.permit(ctx, time.Now(), tierNormal, 25, 25, 10*time.Millisecond)
		if perm.OK() {
			break
		}
		if p.m.Have() >= 25 || time.Now().After(deadline) {
			t.Fatalf("not granted a cost of 25 with %d permits held", p.m.Have())
		}
		time.Sleep(max(time.Until(perm.RetryAt), time.Millisecond))
	}
	if asks < 3 || p.m.Have() > 10 {
		t.Errorf("cost 25 with a burst of 10: granted after %d asks with %d left over, want at least 3 asks and at most 10 left", asks, p.m.Have())
	}
	left := p.m.Have()
	p.settle(ctx, permits.Permission{Kind: permits.Granted, Cost: 25}, false)
	if p.m.Have() != left+25 {
		t.Errorf("settling 25 unsent: %d held, want %d", p.m.Have(), left+25)
	}
	if perm := p.permit(ctx, time.Now(), tierNormal, 25, 25, time.Second); !perm.OK() || p.m.Have() != left {
		t.Errorf("spending unspent permits: ok %v with %d left, want ok with %d, without asking", perm.OK(), p.m.Have(), left)
	}
}

// countedQuota counts the round trips a permit pool makes to a real quota.
type countedQuota struct {
	quota.Quota
	takes atomic.Int64
}

func (c *countedQuota) Take(ctx context.Context, key string, n int, now time.Time) (quota.Grant, error) {
	c.takes.Add(1)
	return c.Quota.Take(ctx, key, n, now)
}

// testClock is a clock that moves only when set.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// TestPermitPoolServiceHangs: when the quota's service hangs (a server that
// accepts connections and never answers, as Redis or Envoy's rate-limit
// service; a real Redis paused with CLIENT PAUSE), the pool asks it once,
// then once per back-off (1 s, 2 s, 4 s, ... on the pool's clock) and one
// probe at a time; every other ask is answered at once without it: granted
// without permits when failing open, postponed by the retry when failing
// closed. A probe that finds Redis answering again fills the pool.
func TestPermitPoolServiceHangs(t *testing.T) {
	silent := services.StartSilent(t)
	rd := services.StartRedis(t)
	for _, svc := range []struct {
		name  string
		q     QuotaConfig
		pause bool // rd: pause it, and unpause it to check the pool finds it back
	}{
		{"silent redis", QuotaConfig{Backend: quotaRedis, Addr: silent.Addr, Rate: "100/s"}, false},
		{"silent envoy", QuotaConfig{Backend: quotaEnvoy, Addr: silent.Addr, Domain: "beamthrottle"}, false},
		{"paused redis", QuotaConfig{Backend: quotaRedis, Addr: rd.Addr, Rate: "100/s"}, true},
	} {
		for _, open := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s fail open %v", svc.name, open), func(t *testing.T) {
				cfg := svc.q
				cfg.Key, cfg.FailOpen, cfg.Timeout = "hang-"+uuid.NewString(), open, 100*time.Millisecond
				q, err := cfg.newQuota()
				if err != nil {
					t.Fatal(err)
				}
				cq := &countedQuota{Quota: q}
				t0 := time.Now()
				clock := &testClock{t: t0}
				p := newPermitPool(cfg, cq)
				p.clock = clock.now
				defer func() {
					q.(io.Closer).Close()
					p.probes.Wait()
				}()
				if svc.pause {
					rd.Pause(t)
					defer rd.Unpause(t)
				}
				ctx := context.Background()
				const retry = time.Second
				// ask asks for a permit at d on both clocks, and checks it is
				// answered without the service.
				ask := func(d time.Duration) {
					t.Helper()
					now := t0.Add(d)
					clock.set(now)
					perm := p.permit(ctx, now, tierNormal, 1, 5, retry)
					switch {
					case perm.Paid():
						t.Errorf("at %v: paid with permits the service could not grant", d)
					case open && !perm.OK():
						t.Errorf("at %v: postponed until %v, want sent at once (fail open)", d, perm.RetryAt.Sub(t0))
					case !open && (perm.OK() || !perm.RetryAt.Equal(now.Add(retry))):
						t.Errorf("at %v: ok %v, retry at %v, want postponed by %v (fail closed)", d, perm.OK(), perm.RetryAt.Sub(t0), retry)
					}
				}
				// takes checks the round trips made so far, once the probe
				// under way, if any, has ended.
				takes := func(when string, want int64) {
					t.Helper()
					p.probes.Wait()
					if got := cq.takes.Load(); got != want {
						t.Errorf("%s: %d round trips to the service, want %d", when, got, want)
					}
				}
				ask(0)
				takes("first ask", 1)
				for d := 20 * time.Millisecond; d < time.Second; d += 20 * time.Millisecond {
					ask(d)
				}
				takes("49 asks within the first back-off (1 s)", 1)
				for range 20 {
					ask(time.Second)
				}
				takes("20 asks when the first back-off ends", 2)
				ask(3*time.Second - time.Millisecond)
				takes("within the second back-off (2 s)", 2)
				ask(3 * time.Second)
				ask(3 * time.Second)
				takes("when the second back-off ends", 3)
				ask(7*time.Second - time.Millisecond)
				ask(7 * time.Second)
				takes("when the third back-off (4 s) ends", 4)
				if !svc.pause {
					return
				}
				rd.Unpause(t)
				// No probe is under way: a longer timeout, within which a busy
				// machine's Redis answers.
				p.cfg.Timeout = 10 * time.Second
				ask(15*time.Second - time.Millisecond) // answering again, but not asked before its back-off ends
				takes("within the fourth back-off (8 s), Redis back", 4)
				ask(15 * time.Second) // the probe that finds it
				takes("when the fourth back-off ends", 5)
				now := t0.Add(15 * time.Second)
				if perm := p.permit(ctx, now, tierNormal, 1, 5, retry); !perm.OK() || !perm.Paid() {
					t.Errorf("after the probe that found Redis: ok %v paid %v, want a permit of the probe's", perm.OK(), perm.Paid())
				}
				takes("a permit of the probe's", 5)
			})
		}
	}
}

// TestPermitPoolHangConcurrent: groups asking at once while the quota's
// service hangs make one round trip between them, not one each: those that
// ask during it wait for its end (the service was up), then every ask is
// answered without the service (failing open). A call let through so and
// then not sent (the policy postponed it) gives back no permits, as it had
// none. Run with -race.
func TestPermitPoolHangConcurrent(t *testing.T) {
	const groups, asks = 8, 25
	silent := services.StartSilent(t)
	cfg := QuotaConfig{Backend: quotaRedis, Addr: silent.Addr, Key: "hang", Rate: "100/s", FailOpen: true, Timeout: 100 * time.Millisecond}
	q, err := cfg.newQuota()
	if err != nil {
		t.Fatal(err)
	}
	cq := &countedQuota{Quota: q}
	now := time.Now()
	p := newPermitPool(cfg, cq)
	p.clock = func() time.Time { return now }
	defer func() {
		q.(io.Closer).Close()
		p.probes.Wait()
	}()
	var wg sync.WaitGroup
	var sent atomic.Int64
	for range groups {
		wg.Go(func() {
			for i := range asks {
				perm := p.permit(context.Background(), now, tierNormal, 1, 5, time.Second)
				if perm.OK() && !perm.Paid() {
					sent.Add(1)
				}
				p.settle(context.Background(), perm, i%2 == 0) // the policy sends every other call
			}
		})
	}
	wg.Wait()
	p.probes.Wait()
	if got := cq.takes.Load(); got != 1 {
		t.Errorf("%d round trips to the hung service, want 1", got)
	}
	if got := sent.Load(); got != groups*asks {
		t.Errorf("%d asks let through without permits, want all %d", got, groups*asks)
	}
	if p.m.Have() != 0 {
		t.Errorf("%d permits in the pool, want none: calls let through failing open had none to give back", p.m.Have())
	}
}

// permit is what a firing does with the pool, in one call, for the tests
// of the pool: ask, and make the round trips the machine asks for until it
// answers (the firing's core does the same in steps, see poolQuota). The
// caller's clock is now plus the wall time since.
func (p *permitPool) permit(ctx context.Context, now time.Time, tier, cost, want int, retry time.Duration) permits.Permission {
	wall := p.now()
	for {
		at := now.Add(p.now().Sub(wall))
		perm := p.ask(ctx, at, tier, cost, want, retry)
		if perm.Trip.N == 0 && perm.Kind != permits.Join || perm.Trip.Probe {
			return perm
		}
		g, err, ok := p.trip(ctx, perm, now.Add(p.now().Sub(wall)))
		p.answer(ctx, perm, g, err, !ok, retry)
		switch {
		case perm.Kind == permits.Granted: // the slots reserved ahead
			return perm
		case !ok:
			return permits.Permission{Kind: permits.Refused, Cost: cost, RetryAt: at.Add(retry)}
		}
	}
}
