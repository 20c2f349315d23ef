package quota

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Reserver is implemented by a quota that hands out time slots rather than
// counts: a reservation says when each of its units may be used, so that
// every client of the quota, in any process, sends on its own slots and
// all of them together make one evenly spaced stream at the quota's rate.
// A count-based [Quota] keeps the count but leaves the timing to each
// client, and clients that spend their permits on their own clocks
// interleave unevenly; a strict limiter (a GCRA with no burst, as API
// gateways are commonly configured) refuses whatever comes closer than one
// interval after the previous call.
//
// Units are cost units: a call of cost c takes c units, c slots' worth of
// time (see [Reservation.Schedule]). The quota reserves by the generic cell
// rate algorithm (GCRA), as golang.org/x/time/rate's ReserveN does in one
// process: each key has a theoretical arrival time (TAT), where its next
// free slot is; a reservation of n units at now starts at
//
//	first = max(TAT, now + lead)
//
// and moves the TAT to first + n × spacing, where spacing is 1 ÷ rate per
// unit. The lead reserves a little ahead of now, so that a caller whose
// answer comes back late (a round trip, a busy scheduler) still meets its
// first slot. A reservation reaches no further ahead than the horizon:
// it holds the units whose slots start by now + horizon, fewer than n when
// the rest would start later, and none when the first would. The horizon
// bounds how far ahead a caller holds slots it may not get to use (its
// firing ends, its elements expire), and so how long those slots keep
// everyone else waiting. A call of cost c needs (c−1) × spacing of the
// horizon beyond the lead: a horizon shorter than that never reserves the
// call whole.
//
// Slots a caller cannot use are given back with Release, or lapse. Release
// moves the TAT back by the unused units only if no later reservation was
// made for the key since (the TAT still stands where this reservation
// ended), and never before now, as x/time/rate's Reservation.Cancel does;
// otherwise the unused slots lapse. A lapsed slot costs idle quota: nobody
// sends on it, so the stream has a gap there, never an extra call, never a
// 429.
//
// Implementations are safe for concurrent use. An error means the quota's
// service did not answer (unreachable, too slow for ctx, or a malformed
// answer); Reserve and Release honour ctx's deadline and cancellation.
// Clients that share a key must use the same rate.
type Reserver interface {
	// Reserve reserves up to n units for key at now, the caller's clock;
	// see [Reservation]. Reserve with n <= 0 reserves nothing, returns the
	// zero Reservation and asks nothing of the service.
	Reserve(ctx context.Context, key string, n int, now time.Time) (Reservation, error)
	// ReserveTier is Reserve for a caller of priority tier tier (TierLow,
	// TierNormal or TierHigh), held to the limits of the quota's [Shares]
	// while higher tiers send. Reserve reserves for TierNormal.
	ReserveTier(ctx context.Context, key string, tier, n int, now time.Time) (Reservation, error)
	// Release gives back the last unused units of r (at most r.Granted), a
	// reservation Reserve made for key, at now. It returns how many units
	// were given back: 0 when a later reservation was made since (the
	// slots lapse), and only those whose slots start at or after now.
	// Release each reservation once at most; unused <= 0 asks nothing of
	// the service.
	Release(ctx context.Context, key string, r Reservation, unused int, now time.Time) (int, error)
}

// Reservation is the answer of [Reserver.Reserve]: Granted slots, the
// first at First and each Spacing after the one before. Times are on the
// caller's clock, the one of the now passed to Reserve.
type Reservation struct {
	// First is the first slot. When Granted is 0, it is where the next free
	// slot was, had nobody else reserved since.
	First time.Time
	// Spacing is the time between slots: one unit's share of the rate, the
	// rate's period ÷ its count, rounded up to the nanosecond so that the
	// slots never come closer than the rate allows.
	Spacing time.Duration
	// Granted is the number of units reserved, from 0 to the number asked.
	Granted int
	// RetryAt is when the next unit falls within the horizon, had nobody
	// else reserved since, when Granted is less than the number asked; it
	// is the zero Time when all were granted. Reserving earlier is allowed
	// and grants nothing.
	RetryAt time.Time
	// Stamp is where the reservation ends on the quota's own clock, in
	// nanoseconds since the Unix epoch, or 0 when Granted is 0: what
	// Release compares with the quota's TAT. For [Slots] that clock is the
	// caller's; for a quota kept by a service, the service's.
	Stamp int64
}

// Schedule returns when to send each of a sequence of calls on r's slots,
// costs[i] being the cost of call i: call i is sent at
//
//	First + (costs[0] + … + costs[i−1]) × Spacing
//
// so that a call of cost c takes c slots' worth of time. It schedules the
// longest prefix of the calls whose costs add up to at most Granted, and
// returns their times and the units they use; Granted − used units are
// left for Release. A cost of 0 is a free call, sent on the next call's
// slot and taking no time; a negative cost counts as 0. A Reservation
// with nothing granted schedules nothing.
func (r Reservation) Schedule(costs []int) (at []time.Time, used int) {
	if r.Granted <= 0 {
		return nil, 0
	}
	for _, c := range costs {
		c = max(c, 0)
		if c > r.Granted-used {
			break
		}
		at = append(at, r.First.Add(time.Duration(used)*r.Spacing))
		used += c
	}
	return at, used
}

// Defaults of SlotsConfig, which a quota kept by a service uses too.
const (
	// DefaultLead is the lead used when SlotsConfig.Lead is zero. It covers
	// a round trip to a quota service in the same region (a millisecond or
	// two) and a busy worker's timer and scheduler delays (a few
	// milliseconds) several times over, so that the first slot of a
	// reservation made at now is still ahead when the caller gets to it.
	// It delays only the first call after an idle spell: while clients
	// keep the TAT ahead of now + lead, the lead changes nothing.
	DefaultLead = 20 * time.Millisecond
	// DefaultHorizon is the horizon used when SlotsConfig.Horizon is zero:
	// one second, the time a firing of transforms/throttle waits for its
	// slots with the default batch interval. A caller then holds no more
	// slots than it can use before it stops waiting, so few lapse, and a
	// worker never pushes the others back by more than a second's worth.
	DefaultHorizon = time.Second
)

// SlotsConfig configures [Slots]. Zero values of Lead and Horizon mean the
// documented defaults.
type SlotsConfig struct {
	// Rate is the quota, in cost units per second, minute, hour or any
	// period. Required.
	Rate Rate
	// Lead is how far ahead of now a reservation starts at the earliest
	// (see [Reserver]). Zero means DefaultLead.
	Lead time.Duration
	// Horizon is how far ahead of now a reservation's last slot may start
	// (see [Reserver]); at least Lead. Zero means DefaultHorizon.
	Horizon time.Duration
	// Shares keeps parts of the rate for higher priority tiers (see
	// [Reserver.ReserveTier]); the zero value keeps nothing.
	Shares Shares
}

// Slots is a [Reserver] kept in memory: one GCRA per key, for the callers
// of one process. It is the known rate of an API without a shared service
// (Beam Java's RequestResponseIO calls it preventive throttling; LLM
// clients, requests or tokens per minute): the slots are spaced 1 ÷ rate
// per unit, from the first reservation on, with no slow start. It reads
// no clock: every method takes the time. A time that steps back leaves the
// TAT where it is, so slots already reserved are never handed out again.
//
// It does not use golang.org/x/time/rate, whose Limiter reserves n tokens
// all or nothing (ReserveN refuses n above its burst and has no horizon
// for partial grants), answers with the time of the n-th token rather than
// the first slot and a spacing, lets tokens accrue up to the burst while
// idle, and cancels a reservation whole, not its unused tail.
//
// Slots is safe for concurrent use and starts no goroutine. Create it with
// [NewSlots]; the zero value is not usable.
type Slots struct {
	spacing time.Duration
	lead    time.Duration
	horizon time.Duration
	shares  Shares

	mu      sync.Mutex
	tat     map[string]time.Time // per key, the TAT; absent means at or before now; also the TATs of Shares' caps
	active  map[string]time.Time // per key and tier with a share: until when it counts as sending
	sweepAt int                  // drop lapsed keys when tat grows to this size
}

// minSweep is the size of the TAT map at which Slots first drops the keys
// whose TAT has passed.
const minSweep = 64

// NewSlots returns Slots for cfg, or an error beginning "quota:" if cfg
// is invalid.
func NewSlots(cfg SlotsConfig) (*Slots, error) {
	if err := cfg.Rate.Validate(); err != nil {
		return nil, fmt.Errorf("quota: Slots: %w", err)
	}
	lead, horizon := cfg.Lead, cfg.Horizon
	if lead < 0 || horizon < 0 {
		return nil, fmt.Errorf("quota: Slots: Lead and Horizon must not be negative, got %v and %v", lead, horizon)
	}
	if lead == 0 {
		lead = DefaultLead
	}
	if horizon == 0 {
		horizon = DefaultHorizon
	}
	if horizon < lead {
		return nil, fmt.Errorf("quota: Slots: Horizon %v must be at least Lead %v", horizon, lead)
	}
	if err := cfg.Shares.Validate(); err != nil {
		return nil, err
	}
	return &Slots{
		spacing: spacing(cfg.Rate),
		lead:    lead,
		horizon: horizon,
		shares:  cfg.Shares,
		tat:     make(map[string]time.Time),
		active:  make(map[string]time.Time),
		sweepAt: minSweep,
	}, nil
}

// spacing returns the time between the slots of r: its period ÷ its count,
// rounded up to the nanosecond.
func spacing(r Rate) time.Duration {
	d := r.Per / time.Duration(r.N)
	if r.Per%time.Duration(r.N) != 0 {
		d++
	}
	return d
}

// Reserve reserves up to n units for key at now, as [Reserver] says, for
// the normal tier. ctx is not used: Slots never waits.
func (s *Slots) Reserve(ctx context.Context, key string, n int, now time.Time) (Reservation, error) {
	return s.ReserveTier(ctx, key, TierNormal, n, now)
}

// ReserveTier reserves up to n units for key at now for a caller of the
// given tier, as [Reserver] says. ctx is not used.
func (s *Slots) ReserveTier(_ context.Context, key string, tier, n int, now time.Time) (Reservation, error) {
	if n <= 0 {
		return Reservation{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shares.Marks(tier) {
		s.active[tierKey(key, "active", tier)] = now.Add(ActiveFor)
	}
	start, granted := reserveSlots(s.ahead(key, now), n, s.spacing, s.lead, s.horizon)
	var caps []Cap // those that apply now
	for _, c := range s.shares.Caps(tier, s.spacing) {
		if until, ok := s.active[tierKey(key, "active", c.Above)]; ok && until.After(now) {
			caps = append(caps, c)
			granted = min(granted, capSlots(s.ahead(tierKey(key, "below", c.Above), now), c.Spacing, s.horizon))
		}
	}
	r := Reservation{First: now.Add(start), Spacing: s.spacing, Granted: granted}
	if granted < n {
		r.RetryAt = r.First.Add(time.Duration(granted)*s.spacing - s.horizon)
	}
	for _, c := range caps {
		k := tierKey(key, "below", c.Above)
		end := now.Add(max(s.ahead(k, now), 0) + time.Duration(granted)*c.Spacing)
		if granted < n {
			r.RetryAt = laterOf(r.RetryAt, end.Add(-s.horizon))
		}
		if granted > 0 {
			s.tat[k] = end
		}
	}
	if granted > 0 {
		end := r.First.Add(time.Duration(granted) * s.spacing)
		r.Stamp = end.UnixNano()
		s.tat[key] = end
		s.sweep(now)
	}
	return r, nil
}

// ahead returns the TAT of key, from now: 0 when it has none.
func (s *Slots) ahead(key string, now time.Time) time.Duration {
	if tat, ok := s.tat[key]; ok {
		return tat.Sub(now)
	}
	return 0
}

// tierKey returns the key of what Slots keeps for key's tier: "active"
// (until when it counts as sending) or "below" (the TAT of the cap of the
// tiers below it). A NUL keeps it apart from every key a caller passes.
func tierKey(key, what string, tier int) string {
	return key + "\x00" + what + ":" + TierName(tier)
}

// laterOf returns the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Release gives back the last unused units of r at now, as [Reserver]
// says. ctx is not used.
func (s *Slots) Release(_ context.Context, key string, r Reservation, unused int, now time.Time) (int, error) {
	unused = min(unused, r.Granted)
	if unused <= 0 {
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tat, ok := s.tat[key]
	if !ok || tat.UnixNano() != r.Stamp {
		return 0, nil
	}
	ahead, back := releaseSlots(tat.Sub(now), unused, s.spacing)
	if ahead <= 0 {
		delete(s.tat, key)
	} else {
		s.tat[key] = now.Add(ahead)
	}
	return back, nil
}

// sweep drops the keys whose TAT has passed (the same as no TAT) once the
// map has doubled since the last sweep, so that keys used once do not
// accumulate. s.mu is held.
func (s *Slots) sweep(now time.Time) {
	if len(s.tat) < s.sweepAt {
		return
	}
	for k, tat := range s.tat {
		if !tat.After(now) {
			delete(s.tat, k)
		}
	}
	for k, until := range s.active {
		if !until.After(now) {
			delete(s.active, k)
		}
	}
	s.sweepAt = max(minSweep, 2*len(s.tat))
}

// reserveSlots is the GCRA's reservation, with every time an offset from
// now: the TAT is ahead of now (negative when it has passed). It returns
// where the first slot starts and how many of n units are granted: those
// whose slots start by horizon. The TAT moves to start + granted × spacing.
// The Redis script of package redisquota does the same arithmetic.
func reserveSlots(ahead time.Duration, n int, spacing, lead, horizon time.Duration) (start time.Duration, granted int) {
	start = max(ahead, lead)
	if start > horizon {
		return start, 0
	}
	fit := (horizon-start)/spacing + 1 // slots starting by horizon
	return start, int(min(time.Duration(n), fit))
}

// releaseSlots gives back the last unused units of a reservation that ends
// at the TAT, ahead of now. It returns where the TAT moves, unused ×
// spacing earlier but not before now (0), and how many of those units
// start at or after now. A TAT that has passed stays where it is.
func releaseSlots(ahead time.Duration, unused int, spacing time.Duration) (newAhead time.Duration, back int) {
	if ahead <= 0 {
		return ahead, 0
	}
	u := time.Duration(unused)
	return max(ahead-u*spacing, 0), int(min(u, ahead/spacing))
}
