package redisquota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// Config configures a [Quota].
type Config struct {
	// Addr is the Redis server's host:port, such as a Memorystore
	// instance's. It is ignored when Client is set. The client made for it
	// fails fast, for the caller to fail open or closed: one dial attempt
	// (2 s at most), one retry of a command whose connection broke, and
	// reads and writes of 1 s at most; ctx's deadline bounds each Take too.
	// go-redis then logs through log/slog's default logger, at warning
	// level (see [New]).
	Addr string
	// Client, when set, is used instead of a client for Addr: for TLS,
	// authentication or a cluster. Give it ContextTimeoutEnabled so that
	// ctx's deadline bounds each Take. Close does not close it.
	Client redis.UniversalClient
	// Rate is the quota: permits per second, minute, hour or any period.
	Rate quota.Rate
	// Burst is the most permits that can be granted at once after a quiet
	// spell: the size of the GCRA's bucket. Zero means [DefaultBurst]. It
	// applies to Take only: the slots Reserve hands out are spaced at the
	// rate, with no burst.
	Burst int
	// Lead and Horizon shape the slots Reserve hands out, as
	// quota.SlotsConfig's fields of the same names do: a reservation
	// starts Lead ahead of the server's now at the earliest, and its last
	// slot starts Horizon ahead at the latest. Zero means
	// quota.DefaultLead and quota.DefaultHorizon. Take ignores them.
	Lead, Horizon time.Duration
	// Shares keeps parts of the rate of Reserve's slots for higher priority
	// tiers (see [Quota.ReserveTier]); the zero value keeps nothing. Take
	// ignores it.
	Shares quota.Shares
}

// DefaultBurst returns the burst used when Config.Burst is zero: one
// second of the rate, rounded up, and at least 1 (10 for 600/m or 36000/h,
// 1 for 60/m). A group that was quiet can then take one second's worth at
// once, and no more, so the quota is spent evenly even when it is counted
// per minute or per hour; a batch larger than the burst is granted in parts.
func DefaultBurst(r quota.Rate) int {
	b := math.Ceil(r.PerSecond())
	if b < 1 || math.IsNaN(b) {
		return 1
	}
	if b > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(b)
}

// Quota is a [quota.Quota] kept in Redis by the generic cell rate
// algorithm (GCRA) of github.com/go-redis/redis_rate, which runs as a Lua
// script on the server with plain commands (EVALSHA, GET, SET, TIME), so it
// works unchanged against Memorystore. Every client that uses the same key
// and the same Rate and Burst, in any process, shares one quota; the Redis
// key is "rate:" + key. The script reads the server's clock: the now passed
// to Take only places RetryAt.
//
// Grants are partial: Take grants what the bucket holds, up to n and at most
// Burst, with AllowAtMost, in one round trip. That call, when it grants less
// than asked, also spends the fraction of a permit the bucket held, which
// would lose up to a permit on every partial grant (a third of the quota,
// measured, when groups ask every 1.5 emission intervals). So Quota counts in
// units of 1/scale of a permit (scale = 1000, fewer for rates above 100 a
// second; the stored state, a time, means the same at any scale) and keeps
// the fraction it was given but could not grant as a credit for the key,
// granted by a later Take: less than one permit per key and Redis value is
// held back (more only after a Take that was granted all it asked). The
// script truncates what it grants to whole units, which loses less than a
// unit per partial grant, and its float arithmetic can find a full bucket a
// hair short, so the bucket is one unit (1/scale of a permit) larger than
// Burst.
//
// Quota is also a [quota.Reserver]: Reserve hands out time slots of
// the same Rate from a GCRA of its own, under the Redis key "slots:" + key,
// so that every worker sends on its own slots and all of them together make
// one evenly spaced stream (see [Quota.Reserve]). Take and Reserve do not
// share their state: use one or the other for a key.
//
// Quota is safe for concurrent use. Create it with [New].
type Quota struct {
	lim    *redis_rate.Limiter
	limit  redis_rate.Limit // in units
	scale  int              // units per permit
	burst  int              // in permits
	unit   time.Duration    // emission interval of one unit
	client redis.UniversalClient
	owned  bool // Close closes client

	spacing, lead, horizon time.Duration // of Reserve's slots
	shares                 quota.Shares

	clock *serverClock // the server's clock, for Reserve's slots

	mu     sync.Mutex
	credit map[string]int // units granted by Redis and not yet by Take, per key
}

// maxUnitRate bounds the rate in units per second so that the script's unit
// emission interval stays at 10 µs or more, far above the resolution of the
// float64 seconds it computes with (about 0.1 µs in this century).
const maxUnitRate = 1e5

// New returns a Quota for cfg, or an error beginning
// "redisquota:" if cfg is invalid. It does not contact the server.
//
// When it makes the client (cfg.Client is nil), it routes go-redis's own log
// lines ("redis: connection pool: failed to dial ...") through log/slog's
// default logger, at warning level: go-redis has one logger for the whole
// process (redis.SetLogger), which otherwise writes to stderr.
func New(cfg Config) (*Quota, error) {
	if err := cfg.Rate.Validate(); err != nil {
		return nil, fmt.Errorf("redisquota: %w", err)
	}
	if cfg.Burst < 0 {
		return nil, fmt.Errorf("redisquota: Burst must not be negative, got %d", cfg.Burst)
	}
	lead, horizon, err := slotWindow(cfg.Lead, cfg.Horizon)
	if err != nil {
		return nil, err
	}
	if err := cfg.Shares.Validate(); err != nil {
		return nil, fmt.Errorf("redisquota: %w", err)
	}
	if cfg.Client == nil && cfg.Addr == "" {
		return nil, errors.New("redisquota: Addr or Client is required")
	}
	scale, burst, err := units(cfg.Rate, cfg.Burst)
	if err != nil {
		return nil, err
	}
	r := &Quota{
		// One unit more than the burst: the script's float arithmetic can find
		// a full bucket a hair short of its size, and it truncates what it
		// grants, so a bucket of exactly burst·scale units would grant one
		// unit less than a burst, a permit short.
		limit:   redis_rate.Limit{Rate: cfg.Rate.N * scale, Period: cfg.Rate.Per, Burst: burst*scale + 1},
		scale:   scale,
		burst:   burst,
		unit:    cfg.Rate.Per / time.Duration(cfg.Rate.N*scale),
		client:  cfg.Client,
		credit:  make(map[string]int),
		spacing: slotSpacing(cfg.Rate),
		lead:    lead,
		horizon: horizon,
		shares:  cfg.Shares,
		clock:   newServerClock(),
	}
	if r.client == nil {
		logRedisToSlog.Do(func() { redis.SetLogger(slogRedis{}) })
		r.client = redis.NewClient(&redis.Options{
			Addr:                  cfg.Addr,
			ContextTimeoutEnabled: true,
			MaxRetries:            1, // a connection broken by a server restart is retried once
			DialerRetries:         1,
			DialTimeout:           2 * time.Second,
			ReadTimeout:           time.Second,
			WriteTimeout:          time.Second,
		})
		r.owned = true
	}
	r.lim = redis_rate.NewLimiter(r.client)
	return r, nil
}

// units returns how many units make a permit of a quota of rate (see
// [Quota]) and its burst in permits (DefaultBurst for 0), or an error if
// they are too large for the script's integer arithmetic.
func units(rate quota.Rate, burst int) (scale, permits int, err error) {
	if burst == 0 {
		burst = DefaultBurst(rate)
	}
	scale = max(int(min(1000, maxUnitRate/rate.PerSecond())), 1)
	if rate.N > math.MaxInt32/scale || burst >= math.MaxInt32/scale {
		return 0, 0, fmt.Errorf("redisquota: rate %v or burst %d is too large", rate, burst)
	}
	return scale, burst, nil
}

// Burst returns the most permits one Take can grant.
func (r *Quota) Burst() int { return r.burst }

// Take asks Redis for n permits for key in one round trip and grants the
// whole permits the bucket holds, up to n and at most Burst; see [Quota].
// When it grants fewer than n, RetryAt is when the bucket will hold the next
// whole permit, had nobody else asked.
func (r *Quota) Take(ctx context.Context, key string, n int, now time.Time) (quota.Grant, error) {
	if n <= 0 {
		return quota.Grant{}, nil
	}
	want := min(n, r.burst)
	// Ask for whole permits' worth of units, not less the credit: asking
	// only for what completes a permit would leave the rest of a full
	// bucket to overflow.
	res, err := r.lim.AllowAtMost(ctx, key, r.limit, want*r.scale)
	if err != nil {
		return quota.Grant{}, wrap(ctx, err, "taking %d for %q", n, key)
	}
	r.mu.Lock()
	units := r.credit[key] + res.Allowed
	granted := min(units/r.scale, n)
	left := units - granted*r.scale
	if left == 0 {
		delete(r.credit, key)
	} else {
		r.credit[key] = left
	}
	r.mu.Unlock()

	g := quota.Grant{Granted: granted}
	if granted < n { // then left < scale
		wait := time.Duration(r.scale-left) * r.unit // the bucket is empty after a partial grant
		if res.Allowed == 0 && res.RetryAfter > 0 {
			wait = res.RetryAfter + time.Duration(r.scale-left-1)*r.unit
		}
		g.RetryAt = now.Add(wait)
	}
	return g, nil
}

// Close closes the client New made for Addr; a Client from the config
// is left open.
func (r *Quota) Close() error {
	if r.owned {
		return r.client.Close()
	}
	return nil
}

// logRedisToSlog installs slogRedis as go-redis's logger, once.
var logRedisToSlog sync.Once

// slogRedis is a go-redis logger (redis.SetLogger) that writes to log/slog's
// default logger at warning level: go-redis logs what goes wrong (a failed
// dial, a broken connection), which the quota's user handles as errors.
type slogRedis struct{}

func (slogRedis) Printf(ctx context.Context, format string, v ...any) {
	slog.Log(ctx, slog.LevelWarn, strings.TrimSpace(fmt.Sprintf(format, v...)), "logger", "go-redis")
}
