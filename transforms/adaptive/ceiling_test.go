package adaptive

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// answerHeap orders calls under way by when they are answered.
type answerHeap []ceilingCall

type ceilingCall struct{ sent, answer time.Duration }

func (h answerHeap) Len() int           { return len(h) }
func (h answerHeap) Less(i, j int) bool { return h[i].answer < h[j].answer }
func (h answerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *answerHeap) Push(x any)        { *h = append(*h, x.(ceilingCall)) }
func (h *answerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ceilingRun drives a Ceiling against a modelled server for d: a client
// that always has work keeps Limit calls under way, sending at most rate
// per second (0: a pacer's slow start, 5/s doubling every 2 s, which no
// refusal ends). The server serves capacity calls per second in
// arrival order (0: at once) and answers each latency() after its turn.
// It returns the calls answered per second over the run and the
// latencies of the second half (after the ceiling has settled).
type ceilingServer struct {
	capacity float64
	latency  func() time.Duration
}

func ceilingRun(t *testing.T, c *Ceiling, srv ceilingServer, rate float64, d time.Duration) (perSec float64, lat []time.Duration) {
	t.Helper()
	base := time.Unix(1_800_000_000, 0)
	var (
		under     answerHeap
		nextTurn  time.Duration
		nextSend  time.Duration
		answered  int
		step      = time.Millisecond
		half      = d / 2
		interval  = time.Duration(0)
		sendEvery = time.Duration(0)
	)
	if srv.capacity > 0 {
		interval = time.Duration(float64(time.Second) / srv.capacity)
	}
	if rate > 0 {
		sendEvery = time.Duration(float64(time.Second) / rate)
	}
	for now := time.Duration(0); now < d; now += step {
		for under.Len() > 0 && under[0].answer <= now {
			a := heap.Pop(&under).(ceilingCall)
			c.Observe(base.Add(a.sent), base.Add(now))
			answered++
			if now >= half {
				lat = append(lat, a.answer-a.sent)
			}
		}
		for under.Len() < c.Limit() && now >= nextSend {
			c.Sent(base.Add(now), under.Len())
			turn := max(now, nextTurn)
			nextTurn = turn + interval
			heap.Push(&under, ceilingCall{sent: now, answer: turn + srv.latency()})
			if rate == 0 { // a pacer's slow start, with no refusal to end it
				sendEvery = time.Duration(float64(time.Second) / min(5*math.Exp2(now.Seconds()/2), 1e6))
			}
			nextSend = now + sendEvery
		}
	}
	return float64(answered) / d.Seconds(), lat
}

func p99(lat []time.Duration) time.Duration {
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(math.Ceil(0.99*float64(len(s))))-1]
}

func TestCeiling(t *testing.T) {
	constant := func(d time.Duration) func() time.Duration { return func() time.Duration { return d } }
	rng := rand.New(rand.NewPCG(1, 2))
	lognormal := func() time.Duration { // median 3 s, p99 20 s
		return time.Duration(3e9 * math.Exp(0.8155*rng.NormFloat64()))
	}
	calls := 0
	shift := func() time.Duration { // 2 s for the first 2,400 calls (2 minutes at 20/s), then 6 s
		calls++
		if calls > 2400 {
			return 6 * time.Second
		}
		return 2 * time.Second
	}
	for _, tc := range []struct {
		name    string
		srv     ceilingServer
		rate    float64
		minRate float64       // answers per second, at least
		maxP99  time.Duration // 0: not checked
	}{
		// A server that queues at 50/s with 2 s of latency: the limit
		// settles near 50 × 2 s plus a short queue.
		{name: "queue", srv: ceilingServer{capacity: 50, latency: constant(2 * time.Second)},
			minRate: 0.97 * 50, maxP99: 4 * time.Second},
		{name: "queue, slower", srv: ceilingServer{capacity: 5, latency: constant(5 * time.Second)},
			minRate: 0.97 * 5, maxP99: 10 * time.Second},
		// A rate limit the client keeps to (the pacer): the latency does
		// not climb, and the limit does not hold the client back.
		{name: "rate-limited", srv: ceilingServer{latency: constant(2 * time.Second)}, rate: 20,
			minRate: 0.99 * 20},
		// The first answers of a heavy tail are its fast ones: a limit
		// that took them for the floor would stall the start.
		{name: "rate-limited, heavy tail", srv: ceilingServer{latency: lognormal}, rate: 500.0 / 60,
			minRate: 0.98 * 500 / 60}, // 35 calls under way at the end are 0.7 %
		// The server's latency triples for good after two minutes (longer
		// prompts): the limit, bound by 40 calls under way at 2 s, must
		// let 120 be under way at 6 s.
		{name: "rate-limited, slower for good", srv: ceilingServer{latency: shift}, rate: 20,
			minRate: 0.9 * 20}, // a dip while the limit learns the new latency
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCeiling(CeilingConfig{Max: 256})
			if err != nil {
				t.Fatal(err)
			}
			got, lat := ceilingRun(t, c, tc.srv, tc.rate, 10*time.Minute)
			if got < tc.minRate {
				t.Errorf("%.2f answers/s, want at least %.2f (limit %d)", got, tc.minRate, c.Limit())
			}
			if tc.maxP99 > 0 && p99(lat) > tc.maxP99 {
				t.Errorf("p99 latency %v, want at most %v (limit %d)", p99(lat), tc.maxP99, c.Limit())
			}
		})
	}
}

func TestCeilingNotInUse(t *testing.T) {
	c, err := NewCeiling(CeilingConfig{Max: 100, Start: 40})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	for i := range 1000 { // latency climbing tenfold, one call under way
		sent := now.Add(time.Duration(i) * 100 * time.Millisecond)
		c.Sent(sent, 0)
		c.Observe(sent, sent.Add(time.Duration(1+i/100)*time.Second))
	}
	if c.Limit() != 40 {
		t.Errorf("limit %d, want 40: a limit not in use does not move", c.Limit())
	}
}

func TestCeilingConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg     CeilingConfig
		wantErr bool
		limit   int
	}{
		{cfg: CeilingConfig{Max: 256}, limit: defaultCeilingStart},
		{cfg: CeilingConfig{Max: 4}, limit: 4},
		{cfg: CeilingConfig{Max: 10, Start: 3}, limit: 3},
		{cfg: CeilingConfig{}, wantErr: true},
		{cfg: CeilingConfig{Max: 1, Start: -1}, wantErr: true},
		{cfg: CeilingConfig{Max: 1, Tolerance: 0.5}, wantErr: true},
		{cfg: CeilingConfig{Max: 1, Tolerance: math.NaN()}, wantErr: true},
	} {
		c, err := NewCeiling(tc.cfg)
		if (err != nil) != tc.wantErr {
			t.Errorf("NewCeiling(%+v): error %v, want error %v", tc.cfg, err, tc.wantErr)
			continue
		}
		if err == nil && c.Limit() != tc.limit {
			t.Errorf("NewCeiling(%+v).Limit() = %d, want %d", tc.cfg, c.Limit(), tc.limit)
		}
	}
}
