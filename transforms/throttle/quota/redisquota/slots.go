package redisquota

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// The scripts of Reserve and Release, sent with EVALSHA, and with EVAL
// when the server does not have them yet (go-redis's Script.Run). They use
// plain commands (TIME, GET, SET, DEL), as redis_rate's do, so they run
// unchanged on Memorystore.
var (
	//go:embed slots_reserve.lua
	reserveLua    string
	reserveScript = redis.NewScript(reserveLua)
	//go:embed slots_release.lua
	releaseLua    string
	releaseScript = redis.NewScript(releaseLua)
)

// slotsPrefix begins the Redis keys of Reserve's TATs, apart from
// redis_rate's ("rate:") for Take.
const slotsPrefix = "slots:"

// slotSpacing returns the time between the slots of r, its period ÷ its
// count rounded up to the nanosecond, as quota.Slots spaces them.
func slotSpacing(r quota.Rate) time.Duration {
	d := r.Per / time.Duration(r.N)
	if r.Per%time.Duration(r.N) != 0 {
		d++
	}
	return d
}

// slotWindow returns the lead and the horizon of Reserve's slots, zeros
// replaced by package quota's defaults, or an error if they are negative or the
// horizon comes before the lead (nothing could ever be reserved), as
// quota.NewSlots refuses them.
func slotWindow(lead, horizon time.Duration) (time.Duration, time.Duration, error) {
	if lead < 0 || horizon < 0 {
		return 0, 0, fmt.Errorf("redisquota: Lead and Horizon must not be negative, got %v and %v", lead, horizon)
	}
	if lead == 0 {
		lead = quota.DefaultLead
	}
	if horizon == 0 {
		horizon = quota.DefaultHorizon
	}
	if horizon < lead {
		return 0, 0, fmt.Errorf("redisquota: Horizon %v must be at least Lead %v", horizon, lead)
	}
	return lead, horizon, nil
}

// Reserve reserves up to n units (cost units of the Rate) for key, in one
// round trip, as [quota.Reserver] says, with the config's Lead and
// Horizon; Burst does not apply. A Lua script runs the GCRA's reservation
// on the server, on the server's clock (TIME), so that workers whose clocks
// differ agree on the slots. It answers with the first slot as an offset
// from the server's now, and the server's now, and Reserve places it on the
// caller's clock through an estimate of the offset between the server's
// clock and the local one: NTP's clock filter, the offset from the round
// trip with the shortest time among the latest (see serverClock), so that a
// round trip slowed on one way, a first one that dials the connection or a
// caller slow to read its answer, does not misplace the slots. Before its
// first reservation a client reads the server's clock a few times (TIME).
// now is the caller's clock when Reserve is called: the slots are placed
// on it by the local time that passes from then on.
// The Stamp is where the reservation ends on the server's clock. The Redis
// key expires when its TAT has passed (a TAT at or before now means the
// same as none), so that keys used once do not stay. Reserve reserves for
// the normal tier.
func (r *Quota) Reserve(ctx context.Context, key string, n int, now time.Time) (quota.Reservation, error) {
	return r.ReserveTier(ctx, key, quota.TierNormal, n, now)
}

// ReserveTier is Reserve for a caller of the given tier, held to the
// limits of the config's Shares while higher tiers send, in the same round
// trip. A tier with a share marks itself as sending under the Redis key
// "slots:" + key + ":active:" + its name (quota.TierName), for
// quota.ActiveFor; the limit of the tiers below it is a GCRA under
// "slots:" + key + ":below:" + its name. On a Redis Cluster these keys
// must be in one hash slot: put the part of key to hash in braces.
func (r *Quota) ReserveTier(ctx context.Context, key string, tier, n int, now time.Time) (quota.Reservation, error) {
	if n <= 0 {
		return quota.Reservation{}, nil
	}
	keys := []string{slotsPrefix + key, slotsPrefix + key + ":active:" + quota.TierName(tier)}
	args := []any{int64(r.spacing), n, int64(r.lead), int64(r.horizon), 0}
	if r.shares.Marks(tier) {
		args[4] = quota.ActiveFor.Milliseconds()
	}
	for _, c := range r.shares.Caps(tier, r.spacing) {
		name := quota.TierName(c.Above)
		keys = append(keys, slotsPrefix+key+":below:"+name, slotsPrefix+key+":active:"+name)
		args = append(args, int64(c.Spacing))
	}
	entry := time.Now() // the caller's now, on the local clock
	if r.clock.held() == 0 {
		r.warmClock(ctx)
	}
	sent := time.Now()
	v, err := reserveScript.Run(ctx, r.client, keys, args...).Int64Slice()
	answered := time.Now()
	if err != nil {
		return quota.Reservation{}, wrap(ctx, err, "reserving %d for %q", n, key)
	}
	if len(v) != 6 || v[1] < 0 || v[1] > int64(n) || v[3] < 0 || v[3] > 999 || v[4] < 0 || v[5] <= 0 {
		return quota.Reservation{}, fmt.Errorf("redisquota: reserving %d for %q: malformed answer %v", n, key, v)
	}
	serverNow := v[5] * 1000 // the script's TIME, in nanoseconds
	r.clock.observe(sent, answered, serverNow)
	// at places an offset from the script's TIME on the caller's clock.
	at := func(d time.Duration) time.Time {
		local, _ := r.clock.local(serverNow+int64(d), answered)
		return now.Add(local.Sub(entry))
	}
	start, granted := time.Duration(v[0]), int(v[1])
	res := quota.Reservation{
		First:   at(start),
		Spacing: r.spacing,
		Granted: granted,
	}
	if granted < n {
		res.RetryAt = res.First.Add(time.Duration(granted)*r.spacing - r.horizon)
		if wait := at(time.Duration(v[4])); wait.After(res.RetryAt) {
			res.RetryAt = wait
		}
	}
	if granted > 0 {
		res.Stamp = v[2]*1000 + v[3]
	}
	return res, nil
}

// Release gives back the last unused units of res, a reservation Reserve
// made for key, in one round trip, as [quota.Reserver] says: a second
// script moves the TAT back if it still stands at res's Stamp (a
// compare-and-set), never before the server's now. now is not used.
func (r *Quota) Release(ctx context.Context, key string, res quota.Reservation, unused int, _ time.Time) (int, error) {
	unused = min(unused, res.Granted)
	if unused <= 0 || res.Stamp <= 0 {
		return 0, nil
	}
	back, err := releaseScript.Run(ctx, r.client, []string{slotsPrefix + key},
		res.Stamp/1000, res.Stamp%1000, unused, int64(r.spacing)).Int()
	if err != nil {
		return 0, wrap(ctx, err, "giving back %d for %q", unused, key)
	}
	if back < 0 || back > unused {
		return 0, fmt.Errorf("redisquota: giving back %d for %q: malformed answer %d", unused, key, back)
	}
	return back, nil
}

// warmClock reads the server's clock a few times (TIME) for r.clock, so
// that the first slots are not placed from the first round trip alone,
// which dials the connection. Errors are left for the reservation to meet.
func (r *Quota) warmClock(ctx context.Context) {
	for range clockWarmSamples {
		sent := time.Now()
		t, err := r.client.Time(ctx).Result()
		if err != nil {
			return
		}
		r.clock.observe(sent, time.Now(), t.UnixNano())
	}
}
