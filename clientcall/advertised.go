package clientcall

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Advertised is one limit an API advertised on an answer, as read by
// [ParseAdvertised]: a quota of Limit units per Window, of which Remaining
// are left until Reset. A field the answer did not advertise holds its
// unknown value: -1 for Limit and Remaining, the zero Time for Reset, 0 for
// Window.
type Advertised struct {
	// Name identifies the policy, bucket or resource the limit applies to:
	// an IETF policy name ("permin"), GitHub's resource ("core"), Discord's
	// bucket, Envoy's descriptor name, or the unit for OpenAI and Anthropic
	// ("requests", "tokens"); "" when the answer names none.
	Name string
	// Unit is what the limit counts: "requests" (the default when the answer
	// does not say), "tokens", "input-tokens", "output-tokens", or the IETF
	// quota unit as sent ("content-bytes", "concurrent-requests").
	Unit      string
	Limit     int64 // the quota per window; -1 if not advertised
	Remaining int64 // what is left now; -1 if not advertised
	// Reset is when Remaining comes back, on the local clock. It is never
	// before the time the answer was received: a reset already past is
	// reported as that time. The zero Time if not advertised.
	Reset  time.Time
	Window time.Duration // the policy's window (IETF w=, Envoy ;w=); 0 if not advertised
	// Refill is true for a bucket that refills continuously (OpenAI,
	// Anthropic): Reset is when it is full again, and capacity comes back
	// gradually before then. False for a window whose quota comes back at
	// once at Reset.
	Refill bool
	// Used is what the answered request took of this limit (its input and
	// output tokens, for a limit on tokens), when the caller knows it:
	// headers do not say, an LLM API's response body does. Zero means not
	// known. The transform paces under a limit on anything but requests
	// only when the caller reports Used (see [ReportAdvertised]).
	Used float64
}

// ParseAdvertised returns the limits advertised in h, the header of an
// answer (success or refusal) received at now on the local clock. It reads:
//
//   - the IETF RateLimit-Policy and RateLimit fields
//     (draft-ietf-httpapi-ratelimit-headers-08 and later: lists of policies
//     named by a String or Token, joined by name), and the forms of older
//     drafts: a RateLimit-Policy of bare quotas ("100;w=60"), the
//     RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset fields, and
//     draft 7's RateLimit dictionary ("limit=100, remaining=50, reset=30");
//   - X-RateLimit-Limit, -Remaining, -Reset and the like (GitHub, X, Discord,
//     Envoy, express-rate-limit), also spelt X-Rate-Limit-; the name is
//     X-RateLimit-Resource (GitHub) or X-RateLimit-Bucket (Discord), and
//     X-RateLimit-Reset-After (Discord) is preferred to X-RateLimit-Reset;
//   - OpenAI's x-ratelimit-{limit,remaining,reset}-{requests,tokens}, the
//     reset a Go-like duration ("6m0s", "12ms") or bare seconds;
//   - Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
//     output-tokens}-{limit,remaining,reset}, the reset in RFC 3339.
//
// A reset sent as a number of seconds is a delay when below 10^9 (about 32
// years, so no delay is larger and no current epoch time smaller), epoch
// seconds from 10^9, and epoch milliseconds from 10^12; decimals are allowed
// ("64.57", "1470173023.123"). Relative resets (delays, durations) count
// from now. Absolute ones (epoch times, RFC 3339) are corrected for the
// server's clock skew with the answer's Date header when it has a valid one:
// local reset = now + (reset − Date).
//
// ParseAdvertised never fails: a field it cannot read is left out, or its
// value left unknown, and a structured field (RFC 9651) that does not parse
// is ignored whole. It returns nil when nothing is advertised. When an answer
// carries several families, all are returned, in the order listed above
// (within a family, in the order sent); the caller picks the tightest.
// Header names are looked up as net/http canonicalises them.
func ParseAdvertised(h http.Header, now time.Time) []Advertised {
	c := clock{now: now}
	if d, err := http.ParseTime(h.Get("Date")); err == nil {
		c.date, c.hasDate = d, true
	}
	var out []Advertised
	out = append(out, ietf(h, c)...)
	for _, prefix := range []string{"X-RateLimit-", "X-Rate-Limit-"} {
		cur, policies := triple(h, prefix, c)
		out = append(out, attach(cur, policies)...)
	}
	out = append(out, buckets(h, c)...)
	return out
}

// unknown returns an observation with nothing advertised yet.
func unknown() Advertised {
	return Advertised{Unit: "requests", Limit: -1, Remaining: -1}
}

// known reports whether a advertises anything.
func known(a Advertised) bool {
	return a.Limit >= 0 || a.Remaining >= 0 || !a.Reset.IsZero() || a.Window > 0
}

// appendKnown appends those of as that advertise anything.
func appendKnown(out []Advertised, as ...Advertised) []Advertised {
	for _, a := range as {
		if known(a) {
			out = append(out, a)
		}
	}
	return out
}

// clock turns the resets an answer advertises into local times.
type clock struct {
	now     time.Time // when the answer was received, on the local clock
	date    time.Time // the answer's Date, on the server's clock
	hasDate bool
}

// notBefore returns t, or now if t is before now.
func (c clock) notBefore(t time.Time) time.Time {
	if t.Before(c.now) {
		return c.now
	}
	return t
}

// after returns the local time d after now.
func (c clock) after(d time.Duration) time.Time {
	return c.notBefore(c.now.Add(d))
}

// at returns the local time of t, an absolute time on the server's clock.
func (c clock) at(t time.Time) time.Time {
	if c.hasDate {
		t = c.now.Add(t.Sub(c.date))
	}
	return c.notBefore(t)
}

// resetAt reads a reset sent as a number of seconds: a delay below 10^9,
// epoch seconds from 10^9, epoch milliseconds from 10^12.
func (c clock) resetAt(v string) (time.Time, bool) {
	whole, nanos, ok := decimalSeconds(v)
	switch {
	case !ok:
		return time.Time{}, false
	case whole >= 1e12:
		return c.at(time.UnixMilli(whole)), true
	case whole >= 1e9:
		return c.at(time.Unix(whole, nanos)), true
	}
	return c.after(time.Duration(whole)*time.Second + time.Duration(nanos)), true
}

// resetAfter reads a reset sent as a delay in seconds, decimals allowed.
func (c clock) resetAfter(v string) (time.Time, bool) {
	whole, nanos, ok := decimalSeconds(v)
	if !ok || whole >= maxRetryAfterSeconds {
		return time.Time{}, false
	}
	return c.after(time.Duration(whole)*time.Second + time.Duration(nanos)), true
}

// decimalSeconds parses a non-negative decimal number of seconds ("30",
// "64.57") into whole seconds and nanoseconds; digits past the ninth
// decimal are dropped.
func decimalSeconds(v string) (whole, nanos int64, ok bool) {
	intPart, frac, dot := strings.Cut(strings.TrimSpace(v), ".")
	if intPart == "" || !isDigits(intPart) || dot && (frac == "" || !isDigits(frac)) {
		return 0, 0, false
	}
	whole, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	nanos, _ = strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return whole, nanos, true
}

// count reads a non-negative decimal integer, or returns -1.
func count(v string) int64 {
	v = strings.TrimSpace(v)
	if v == "" || !isDigits(v) {
		return -1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}
