package testserver

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Advertise names a family of headers in which the server tells every
// client its quota on every answer, success or refusal (Config.Advertise).
type Advertise string

// The header families the server can advertise its quota in.
const (
	// AdvertiseNone sends no quota headers (the default).
	AdvertiseNone Advertise = ""
	// AdvertiseIETF sends draft-ietf-httpapi-ratelimit-headers' structured
	// fields: RateLimit-Policy: "default";q=Quota;w=Period and
	// RateLimit: "default";r=remaining;t=seconds to the reset.
	AdvertiseIETF Advertise = "ietf"
	// AdvertiseDraft sends the older drafts' RateLimit-Limit,
	// RateLimit-Remaining and RateLimit-Reset (seconds to the reset), as
	// express-rate-limit and Kong do.
	AdvertiseDraft Advertise = "draft"
	// AdvertiseX sends X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset, the reset in epoch seconds, as GitHub does (the
	// answer's Date lets a client correct for clock skew).
	AdvertiseX Advertise = "x-ratelimit"
	// AdvertiseOpenAI sends x-ratelimit-limit-requests,
	// x-ratelimit-remaining-requests and x-ratelimit-reset-requests, the
	// reset a duration ("1.5s", "6m0s") until the limit is full again.
	AdvertiseOpenAI Advertise = "openai"
	// AdvertiseAnthropic sends anthropic-ratelimit-requests-limit,
	// -remaining and -reset, the reset in RFC 3339 when the limit is full
	// again.
	AdvertiseAnthropic Advertise = "anthropic"
)

// advertiseFamilies lists the families, for validation and flag help.
var advertiseFamilies = []Advertise{AdvertiseNone, AdvertiseIETF, AdvertiseDraft, AdvertiseX, AdvertiseOpenAI, AdvertiseAnthropic}

// valid reports whether a is a known family.
func (a Advertise) valid() bool {
	for _, f := range advertiseFamilies {
		if a == f {
			return true
		}
	}
	return false
}

// quotaState is the quota as the limiter sees it at one instant: a window
// or policy of limit units, remaining of them left, full again (a window's
// end, a bucket's refill) reset later. capacity is what remaining counts
// up to: the quota for a window or token bucket, the burst for GCRA.
type quotaState struct {
	limit, capacity, remaining int64
	reset                      time.Duration
}

// state returns the quota's state at now, or false while it is unlimited
// or in Mode Queue (which refuses nothing).
func (l *limiter) state(now time.Time) (quotaState, bool) {
	if l.quota == 0 || l.mode == Queue {
		return quotaState{}, false
	}
	l.advance(now)
	s := quotaState{limit: int64(l.quota), capacity: int64(l.quota)}
	switch l.mode {
	case GCRA:
		s.capacity = l.rule.maxCost
		ahead := l.rule.tat.Sub(now) // time the accepted requests still occupy
		s.reset = max(ahead, 0)
		t := float64(l.rule.t) + float64(l.rule.tRem)/float64(l.rule.quota)
		tau := float64(l.rule.tau) + float64(l.rule.tauRem)/float64(l.rule.quota)
		// A request fits iff now ≥ TAT − tau: so many fit back to back.
		s.remaining = min(max(int64(math.Floor((tau-float64(max(ahead, 0)))/t))+1, 0), s.capacity)
	case FixedWindow:
		s.remaining = max(int64(l.quota)-l.used, 0)
		s.reset = l.windowStart.Add(l.windowLen).Sub(now)
	default:
		s.remaining = l.credit / l.unit
		if missing := l.capacity - l.credit; missing > 0 && l.perStep > 0 {
			steps := (missing + l.perStep - 1) / l.perStep
			s.reset = l.last.Add(time.Duration(steps) * l.step).Sub(now)
		}
	}
	return s, true
}

// as is s as a quota of limit units tells it (Config.AdvertiseQuota):
// that limit, a capacity of limit (GCRA's, its burst, at most limit), less
// what has been used of s's capacity, at least 0, and s's reset.
func (s quotaState) as(limit int64) quotaState {
	used := s.capacity - s.remaining
	capacity := limit
	if s.capacity != s.limit { // GCRA: the capacity is the burst
		capacity = min(s.capacity, limit)
	}
	return quotaState{limit: limit, capacity: capacity, remaining: max(capacity-used, 0), reset: s.reset}
}

// advertise sets the headers of family a on h for state s, taken delay
// before the answer is sent at sent (on the server's clock), for a quota
// period long.
func advertise(h http.Header, a Advertise, s quotaState, period, delay time.Duration, sent time.Time) {
	reset := max(s.reset-delay, 0)
	secs := int64(math.Ceil(reset.Seconds())) // delay-seconds round up, as a server must not promise early
	switch a {
	case AdvertiseIETF:
		h.Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d`, s.limit, max(int64(math.Ceil(period.Seconds())), 1)))
		h.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, s.remaining, secs))
	case AdvertiseDraft:
		h.Set("RateLimit-Limit", strconv.FormatInt(s.limit, 10))
		h.Set("RateLimit-Remaining", strconv.FormatInt(s.remaining, 10))
		h.Set("RateLimit-Reset", strconv.FormatInt(secs, 10))
	case AdvertiseX:
		h.Set("X-RateLimit-Limit", strconv.FormatInt(s.limit, 10))
		h.Set("X-RateLimit-Remaining", strconv.FormatInt(s.remaining, 10))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(sent.Add(reset+time.Second-1).Unix(), 10))
		h.Set("Date", sent.UTC().Format(http.TimeFormat))
	case AdvertiseOpenAI:
		h.Set("X-Ratelimit-Limit-Requests", strconv.FormatInt(s.capacity, 10))
		h.Set("X-Ratelimit-Remaining-Requests", strconv.FormatInt(s.remaining, 10))
		h.Set("X-Ratelimit-Reset-Requests", reset.Round(time.Millisecond).String())
	case AdvertiseAnthropic:
		h.Set("Anthropic-Ratelimit-Requests-Limit", strconv.FormatInt(s.capacity, 10))
		h.Set("Anthropic-Ratelimit-Requests-Remaining", strconv.FormatInt(s.remaining, 10))
		h.Set("Anthropic-Ratelimit-Requests-Reset", sent.Add(reset+time.Second-1).Truncate(time.Second).UTC().Format(time.RFC3339))
		h.Set("Date", sent.UTC().Format(http.TimeFormat))
	}
}
