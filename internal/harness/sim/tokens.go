package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// TokenQuota configures the backend of TokenLimits: three limits over the
// same fixed windows, on requests, input tokens and output tokens, as an
// LLM API sets them, and the lognormal token counts of its requests. The
// zero value is not valid: TokenLimits panics on it.
type TokenQuota struct {
	// Window is the windows' length, whole seconds.
	Window time.Duration
	// Requests, Input and Output are a window's limits on requests, input
	// tokens and output tokens at a phase Capacity of 1; a phase scales
	// all three by its Capacity (rounded down), and an outage makes them 0.
	Requests, Input, Output int64
	// InputMedian and InputSigma are the median and σ of the lognormal
	// draw of a request's input tokens, OutputMedian and OutputSigma of
	// its output tokens; a draw is rounded, at least 1 and at most the
	// window's limit at a Capacity of 1. A σ of 0 makes every request
	// take its median.
	InputMedian, InputSigma, OutputMedian, OutputSigma float64
	// RetryAfter puts a Retry-After on every 429: the wait until the next
	// request would be accepted, rounded up to whole seconds, at least
	// 1 s.
	RetryAfter bool
}

// Names of the limits of TokenLimits, in the order it advertises them and
// LimitUse reports them.
const (
	LimitRequests = "requests"
	LimitInput    = "input tokens"
	LimitOutput   = "output tokens"
)

// tokenLimitNames are the limits by index.
var tokenLimitNames = [3]string{LimitRequests, LimitInput, LimitOutput}

// Indices of the limits.
const (
	limRequests = iota
	limInput
	limOutput
)

// TokenLimits is a backend with three fixed-window limits, as an LLM API
// has them: on requests, on input tokens and on output tokens per window
// (TokenQuota), the windows aligned to the start of the run. Every
// request takes input and output tokens drawn from lognormal
// distributions, in the order the requests reach the backend, from a
// stream seeded with the run. It panics if q is not valid.
//
// A request is refused if fewer than one request is left in the window,
// fewer input tokens than its own, or less than one output token: its
// output is not known before it is served, as an API does not know it.
// An accepted request is charged its input and output tokens at once, so
// the last requests of a window may overdraw its output tokens; the
// backend advertises none left then. Each refusal is counted against the
// first limit that refused it, in the order requests, input tokens,
// output tokens (Result.Limits).
//
// It advertises (Advertiser) the three limits in that order, as fixed
// windows: Limit, Remaining, Reset at the window's end, Window, and Used,
// what the request answered took of each: one request, and its tokens if
// it was accepted; for a refused request the token limits' Used is -1
// (nothing said: it took none, which says nothing of what one takes).
//
// NextAvailable is exact: the next request's tokens are drawn ahead of
// it, so the backend knows whether that request fits. A request whose
// input tokens exceed the whole of a window's limit (a phase with a low
// Capacity) is never accepted, and NextAvailable says Never; the request
// after it draws afresh.
func TokenLimits(q TokenQuota) BackendModel {
	switch {
	case q.Window < time.Second || q.Window%time.Second != 0:
		panic(fmt.Sprintf("sim.TokenLimits: Window must be whole seconds, got %v", q.Window))
	case q.Requests < 1 || q.Input < 1 || q.Output < 1:
		panic(fmt.Sprintf("sim.TokenLimits: the limits must be at least 1, got %d, %d, %d", q.Requests, q.Input, q.Output))
	case !(q.InputMedian >= 1) || !(q.OutputMedian >= 1) || !(q.InputSigma >= 0) || !(q.OutputSigma >= 0):
		panic(fmt.Sprintf("sim.TokenLimits: the medians must be at least 1 and the σ not negative, got %v, %v, %v, %v",
			q.InputMedian, q.InputSigma, q.OutputMedian, q.OutputSigma))
	}
	name, desc := withRetryAfter(fmt.Sprintf("tokens-%s", compact(q.Window)), fmt.Sprintf(
		"fixed windows of %s aligned to the run's start, limits of %s requests, %s input tokens and %s output tokens each "+
			"(scaled by the phase's capacity); a request's tokens lognormal, input median %g σ %g (mean %.1f), output median %g σ %g "+
			"(mean %.1f), its output charged only once admitted", spaced(q.Window), thousands(q.Requests), thousands(q.Input),
		thousands(q.Output), q.InputMedian, q.InputSigma, q.meanInput(), q.OutputMedian, q.OutputSigma, q.meanOutput()), q.RetryAfter)
	return BackendModel{Name: name, Description: desc, New: func(c Capacity, seed uint64) Backend {
		return &tokenLimits{q: q, cap: c, rng: rand.New(rand.NewPCG(seed, 0x70c3e5))}
	}}
}

// meanInput and meanOutput are the mean token counts of a request.
func (q TokenQuota) meanInput() float64  { return lognormalMean(q.InputMedian, q.InputSigma) }
func (q TokenQuota) meanOutput() float64 { return lognormalMean(q.OutputMedian, q.OutputSigma) }

// lognormalMean is the mean of a lognormal of median m and σ s,
// m × exp(s²/2): the rounding and the bounds of the token counts change it
// by far less than a token.
func lognormalMean(m, s float64) float64 { return m * math.Exp(s*s/2) }

// rate returns the requests per second the binding limit allows at a
// Capacity of 1, by the mean token counts, and the name of that limit.
func (q TokenQuota) rate() (float64, string) {
	w := q.Window.Seconds()
	rates := [3]float64{float64(q.Requests) / w, float64(q.Input) / w / q.meanInput(), float64(q.Output) / w / q.meanOutput()}
	i := 0
	for j := range rates {
		if rates[j] < rates[i] {
			i = j
		}
	}
	return rates[i], tokenLimitNames[i]
}

// thousands formats n with a comma between thousands, as "40,000".
func thousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tokenLimits is the Backend of TokenLimits.
type tokenLimits struct {
	q   TokenQuota
	cap Capacity
	rng *rand.Rand // draws the requests' tokens, in order

	k    int      // the current window
	used [3]int64 // what window k took of each limit
	uses [][3]int64

	next  [3]int64 // the next request's take: 1, its input and output tokens
	drawn bool     // next is drawn
	last  [3]int64 // what the last request served took

	refused [3]int64 // by the first limit that refused
}

// The backend reports the use of its limits.
var _ limiter = (*tokenLimits)(nil)

// end returns the end of window k.
func (b *tokenLimits) end(k int) time.Duration { return time.Duration(k+1) * b.q.Window }

// roll moves to the window holding t, keeping what each window took.
func (b *tokenLimits) roll(t time.Duration) {
	for t >= b.end(b.k) {
		b.uses = append(b.uses, b.used)
		b.k, b.used = b.k+1, [3]int64{}
	}
}

// limits returns the limits per window at rate (requests per second):
// each scaled by the phase's Capacity, rate over the base.
func (b *tokenLimits) limits(rate float64) [3]int64 {
	s := 0.0
	if b.cap.base > 0 {
		s = rate / b.cap.base
	}
	scale := func(n int64) int64 { return int64(math.Floor(float64(n)*s + tolerance)) }
	return [3]int64{scale(b.q.Requests), scale(b.q.Input), scale(b.q.Output)}
}

// pending returns the next request's take, drawing it if need be: the
// draws come in the order the requests reach the backend, whoever asks
// first.
func (b *tokenLimits) pending() [3]int64 {
	if !b.drawn {
		b.next = [3]int64{1, b.draw(b.q.InputMedian, b.q.InputSigma, b.q.Input), b.draw(b.q.OutputMedian, b.q.OutputSigma, b.q.Output)}
		b.drawn = true
	}
	return b.next
}

// draw returns a lognormal token count of median m and σ s, rounded,
// within [1, most].
func (b *tokenLimits) draw(m, s float64, most int64) int64 {
	x := m * math.Exp(s*b.rng.NormFloat64())
	return min(max(int64(math.Round(min(x, float64(most)))), 1), most)
}

// refuser returns the first limit that refuses a request taking take when
// used is taken of limits lim, or −1 if none does.
func refuser(used, lim, take [3]int64) int {
	switch {
	case lim[limRequests]-used[limRequests] < take[limRequests]:
		return limRequests
	case lim[limInput]-used[limInput] < take[limInput]:
		return limInput
	case lim[limOutput]-used[limOutput] < 1: // the output is not known yet
		return limOutput
	}
	return -1
}

// Take implements Backend.
func (b *tokenLimits) Take(at time.Duration) (bool, time.Duration) {
	b.roll(at)
	take := b.pending()
	b.drawn = false
	rate, _ := b.cap.At(at)
	if by := refuser(b.used, b.limits(rate), take); by >= 0 {
		b.refused[by]++
		b.last = [3]int64{1, 0, 0}
		if !b.q.RetryAfter {
			return false, 0
		}
		return false, retryAfter(at, b.NextAvailable(at), rate)
	}
	for i := range b.used {
		b.used[i] += take[i]
	}
	b.last = take
	return true, 0
}

// NextAvailable implements Backend.
func (b *tokenLimits) NextAvailable(at time.Duration) time.Duration {
	b.roll(at)
	take := b.pending()
	t, k, used := at, b.k, b.used
	for {
		rate, until := b.cap.At(t)
		lim := b.limits(rate)
		if refuser(used, lim, take) < 0 {
			return t
		}
		if until == Never && refuser([3]int64{}, lim, take) >= 0 {
			return Never // not even a fresh window
		}
		if end := b.end(k); until < end {
			t = until
		} else {
			t, k, used = end, k+1, [3]int64{}
		}
	}
}

// Advertise implements Advertiser: the three limits, in the order
// requests, input tokens, output tokens, at the capacity in force at at.
func (b *tokenLimits) Advertise(start time.Time, at time.Duration) []adaptive.Quota {
	b.roll(at)
	rate, _ := b.cap.At(at)
	lim := b.limits(rate)
	qs := make([]adaptive.Quota, len(lim))
	for i := range qs {
		used := float64(b.last[i])
		if used == 0 {
			used = -1 // a refused request took no tokens: nothing said of what one takes
		}
		qs[i] = adaptive.Quota{Limit: lim[i], Remaining: max(lim[i]-b.used[i], 0), Reset: start.Add(b.end(b.k)),
			Window: b.q.Window, Used: used}
	}
	return qs
}

// limitUse implements limiter.
func (b *tokenLimits) limitUse(end time.Duration) []LimitUse {
	ls := make([]LimitUse, len(tokenLimitNames))
	for i, name := range tokenLimitNames {
		ls[i] = LimitUse{Name: name, Window: b.q.Window, Refused: b.refused[i]}
	}
	for k := 0; b.end(k) <= end; k++ {
		var used [3]int64
		switch {
		case k < len(b.uses):
			used = b.uses[k]
		case k == b.k:
			used = b.used
		}
		rate, _ := b.cap.At(time.Duration(k) * b.q.Window)
		lim := b.limits(rate)
		for i := range ls {
			ls[i].Use = append(ls[i].Use, ratio(float64(used[i]), float64(lim[i])))
		}
	}
	return ls
}
