package adaptive

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The model of several workers sharing an advertised quota: each worker has
// its own AdvertisedRate and sees only the answers to its own requests; a
// server counts the quota and advertises it on every answer, accepted or
// refused; an outside client takes its part without any controller.

// quotaServer is the server's quota: take spends one unit at d, the model
// time, if there is one, and returns what the answer advertises.
type quotaServer interface {
	take(d time.Duration) (ok bool, q Quota)
	perMinute() float64 // the quota per minute
}

// quotaWindow is a quota of limit per window, all back at each boundary.
// It advertises Limit, Remaining and Reset, not Window.
type quotaWindow struct {
	limit  int64
	window time.Duration
	start  time.Duration
	used   int64
}

func (w *quotaWindow) take(d time.Duration) (bool, Quota) {
	for d >= w.start+w.window {
		w.start += w.window
		w.used = 0
	}
	ok := w.used < w.limit
	if ok {
		w.used++
	}
	return ok, Quota{Limit: w.limit, Remaining: w.limit - w.used, Reset: at(w.start + w.window)}
}

func (w *quotaWindow) perMinute() float64 {
	return float64(w.limit) * float64(time.Minute) / float64(w.window)
}

// windowAsBucket is a window that advertises in a bucket's headers, as a
// gateway counting in windows that sends OpenAI's: Refill set, Reset the
// window's end (when it is full again).
type windowAsBucket struct{ quotaServer }

func (w *windowAsBucket) take(d time.Duration) (bool, Quota) {
	ok, q := w.quotaServer.take(d)
	q.Refill = true
	return ok, q
}

// quotaBucket refills continuously, OpenAI style: capacity limit, refilled
// at limit per window, Reset when full again (in whole milliseconds, as
// OpenAI sends "12ms"). It starts full.
type quotaBucket struct {
	limit  int64
	window time.Duration
	tokens float64
	at     time.Duration
}

func (b *quotaBucket) take(d time.Duration) (bool, Quota) {
	rho := float64(b.limit) / b.window.Seconds()
	b.tokens = min(float64(b.limit), b.tokens+rho*(d-b.at).Seconds())
	b.at = d
	ok := b.tokens >= 1
	if ok {
		b.tokens--
	}
	full := time.Duration((float64(b.limit)-b.tokens)/rho*1e3) * time.Millisecond
	return ok, Quota{Limit: b.limit, Remaining: int64(b.tokens), Reset: at(d + full), Refill: true}
}

func (b *quotaBucket) perMinute() float64 {
	return float64(b.limit) * float64(time.Minute) / float64(b.window)
}

// quotaModel is one run's setting.
type quotaModel struct {
	server  quotaServer
	workers int
	outside float64       // the outside client's share of the quota rate
	length  time.Duration // model time; whole minutes
	seed    uint64
	demand  []float64 // each worker's demand, in fair shares; nil: 4 each
}

// quotaFigures is what a run gives.
type quotaFigures struct {
	sent, refused int       // the workers' requests
	used          []float64 // by minute: the workers' accepted ÷ the quota the outside client left
	refusedBy     []int     // the workers' refusals, by minute
	accepted      []float64 // each worker's requests accepted after the first minute
}

// worst returns the least share of the quota used in a minute after the
// first, and the waste.
func (f quotaFigures) worst() (used, waste float64) {
	used = math.Inf(1)
	for _, u := range f.used[1:] {
		used = min(used, u)
	}
	return used, float64(f.refused) / float64(f.sent)
}

// spread returns the least and the most a worker had accepted, each ÷ the
// mean of all.
func (f quotaFigures) spread() (least, most float64) {
	mean := 0.0
	for _, a := range f.accepted {
		mean += a / float64(len(f.accepted))
	}
	return slices.Min(f.accepted) / mean, slices.Max(f.accepted) / mean
}

// quotaEvent is a request reaching the server (answer false) or its answer
// reaching the client.
type quotaEvent struct {
	at     time.Duration
	seq    int
	worker int // -1: the outside client
	sent   time.Duration
	back   time.Duration // when the answer reaches the client
	answer bool
	ok     bool
	q      Quota
}

type quotaEvents []quotaEvent

func (h quotaEvents) Len() int { return len(h) }
func (h quotaEvents) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h quotaEvents) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *quotaEvents) Push(x any)   { *h = append(*h, x.(quotaEvent)) }
func (h *quotaEvents) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Constants of the model's driver.
const (
	quotaTick      = 5 * time.Millisecond
	quotaDemand    = 4.0 // each worker's demand, in fair shares
	quotaStartRate = 1.0 // requests per second while Rate is 0
	quotaJitter    = 0.05
)

// simulate runs the model: every tick, each worker sends when 1/rate
// (jittered by ±5 %) has passed since its last send, at the rate
// min(demand, Rate), or quotaStartRate while Rate is 0; each request
// reaches the server after a part of its latency (80 to 120 ms) and the
// answer comes back after the whole.
func (m quotaModel) simulate(t *testing.T) quotaFigures {
	t.Helper()
	rnd := rand.New(rand.NewPCG(m.seed, 1))
	quota := m.server.perMinute() / 60 // per second
	minutes := int(m.length / time.Minute)
	f := quotaFigures{refusedBy: make([]int, minutes), accepted: make([]float64, m.workers)}
	ars := make([]*AdvertisedRate, m.workers)
	demand := make([]float64, m.workers)
	begin := make([]time.Duration, m.workers) // the worker's first send
	last := make([]time.Duration, m.workers)
	gap := make([]float64, m.workers) // the next spacing, in units of 1/rate
	for i := range ars {
		ar, err := NewAdvertisedRate(AdvertisedRateConfig{})
		if err != nil {
			t.Fatal(err)
		}
		ars[i] = ar
		demand[i] = quotaDemand * quota / float64(m.workers)
		if m.demand != nil {
			demand[i] = m.demand[i] * quota / float64(m.workers)
		}
		begin[i] = time.Duration(rnd.Float64() * float64(time.Second))
		last[i], gap[i] = -time.Hour, 1
	}
	workers := make([]float64, minutes) // accepted, by minute
	outside := make([]float64, minutes)
	var events quotaEvents
	seq := 0
	send := func(d time.Duration, w int) {
		seq++
		lat := time.Duration((0.08 + 0.04*rnd.Float64()) * float64(time.Second))
		up := time.Duration(float64(lat) * (0.4 + 0.2*rnd.Float64()))
		heap.Push(&events, quotaEvent{at: d + up, seq: seq, worker: w, sent: d, back: d + lat})
	}
	serve := func(e quotaEvent) quotaEvent {
		e.ok, e.q = m.server.take(e.at)
		minute := int(e.at / time.Minute)
		switch {
		case minute >= minutes:
		case e.ok && e.worker < 0:
			outside[minute]++
		case e.ok:
			workers[minute]++
			if minute > 0 {
				f.accepted[e.worker]++
			}
		case e.worker >= 0:
			f.refusedBy[minute]++
		}
		if !e.ok && e.worker >= 0 {
			f.refused++
		}
		e.answer, e.at = true, e.back
		return e
	}
	outGap := time.Duration(math.MaxInt64)
	if m.outside > 0 {
		outGap = time.Duration(float64(time.Second) / (m.outside * quota))
	}
	outNext := time.Duration(0)
	for d := time.Duration(0); d < m.length; d += quotaTick {
		for len(events) > 0 && events[0].at <= d {
			switch e := heap.Pop(&events).(quotaEvent); {
			case !e.answer:
				heap.Push(&events, serve(e))
			case e.worker >= 0:
				ars[e.worker].Observe(at(e.at), at(e.sent), e.q)
			}
		}
		for ; d >= outNext; outNext += outGap {
			send(d, -1)
		}
		for i, ar := range ars {
			r := ar.Rate(at(d))
			if r == 0 {
				r = quotaStartRate
			}
			if d < begin[i] || float64(d-last[i]) < gap[i]*float64(time.Second)/min(r, demand[i]) {
				continue
			}
			ar.Sent(at(d), 1)
			f.sent++
			send(d, i)
			last[i] = d
			gap[i] = 1 + quotaJitter*(2*rnd.Float64()-1)
		}
	}
	f.used = make([]float64, minutes)
	for i := range f.used {
		f.used[i] = workers[i] / (m.server.perMinute() - outside[i])
	}
	return f
}
