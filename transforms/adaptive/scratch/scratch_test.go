package scratch

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

type backend interface {
	take(t float64) (bool, float64)
}

type bucket struct{ cap, depth, tok, last float64 }

func (b *bucket) take(t float64) (bool, float64) {
	b.tok = math.Min(b.depth, b.tok+(t-b.last)*b.cap)
	b.last = t
	if b.tok >= 1 {
		b.tok--
		return true, 0
	}
	return false, math.Max(1, math.Ceil((1-b.tok)/b.cap))
}

type window struct {
	w, q  float64
	start float64
	used  float64
	ra    bool
}

func (b *window) take(t float64) (bool, float64) {
	for t >= b.start+b.w {
		b.start += b.w
		b.used = 0
	}
	if b.used < b.q {
		b.used++
		return true, 0
	}
	if !b.ra {
		return false, 0
	}
	return false, math.Max(1, math.Ceil(b.start+b.w-t))
}

type gcra struct{ T, tat float64 }

func (b *gcra) take(t float64) (bool, float64) {
	if t >= b.tat-1e-12 {
		b.tat = math.Max(b.tat, t) + b.T
		return true, 0
	}
	return false, math.Max(1, math.Ceil(b.tat-t))
}

// run: G groups always backlogged, each group: decide; if postponed, next event at RetryAt.
var cfgFor = func(G int) adaptive.PacerConfig { return adaptive.PacerConfig{} }

var slotted = false

// slot returns the first time >= t in group g's slice of the frame 1/r
// (rate r quantised down to a power of 2^(1/4)), frames anchored at 0.
func slot(t, r float64, g, G int) float64 {
	q := math.Pow(2, math.Floor(math.Log2(r)*4)/4)
	F := 1 / q
	k := math.Floor(t / F)
	start := k*F + float64(g)*F/float64(G)
	if start < t-1e-12 {
		start += F
	}
	return start
}

func run(b backend, G int, dur float64, lat float64, useRA bool) (acc, rej []int) {
	acc, rej = make([]int, G), make([]int, G)
	ps := make([]*adaptive.Pacer, G)
	nextT := make([]float64, G)
	for g := range G {
		ps[g], _ = adaptive.NewPacer(cfgFor(G))
		nextT[g] = float64(g) * 0.013
	}
	epoch := time.Unix(1_700_000_000, 0)
	at := func(t float64) time.Time { return epoch.Add(time.Duration(t * 1e9)) }
	type ans struct {
		t, sent float64
		ok      bool
		ra      float64
	}
	pending := make([][]ans, G)
	for {
		// pick next group
		g := 0
		for i := range G {
			if nextT[i] < nextT[g] {
				g = i
			}
		}
		t := nextT[g]
		if t > dur {
			break
		}
		// deliver answers due
		for i := range G {
			keep := pending[i][:0]
			for _, a := range pending[i] {
				if a.t <= t {
					o := adaptive.Accepted
					if !a.ok {
						o = adaptive.Throttled
					}
					ra := time.Duration(0)
					if useRA {
						ra = time.Duration(a.ra * 1e9)
					}
					ps[i].Record(at(a.t), adaptive.Answer{Outcome: o, Sent: at(a.sent), RetryAfter: ra})
				} else {
					keep = append(keep, a)
				}
			}
			pending[i] = keep
		}
		if slotted {
			if st := slot(t, ps[g].Rate()+1e-9, g, G); st > t+1e-9 && ps[g].Rate() > 0 {
				nextT[g] = st
				continue
			}
		}
		d := ps[g].Decide(at(t), len(pending[g]))
		if d.Verdict == adaptive.Send {
			ok, ra := b.take(t)
			if ok {
				acc[g]++
			} else {
				rej[g]++
			}
			pending[g] = append(pending[g], ans{t + lat, t, ok, ra})
			nextT[g] = t + 1e-6
		} else {
			nextT[g] = math.Max(t+1e-6, float64(d.RetryAt.Sub(epoch))/1e9)
		}
	}
	return
}

func report(name string, acc, rej []int, capacity, dur float64) {
	var a, r, s, s2 float64
	for i := range acc {
		a += float64(acc[i])
		r += float64(rej[i])
		s += float64(acc[i])
		s2 += float64(acc[i]) * float64(acc[i])
	}
	jain := s * s / (float64(len(acc)) * s2)
	fmt.Printf("%-28s G=%2d util %.3f waste %.3f jain %.3f\n", name, len(acc), a/(capacity*dur), r/(a+r), jain)
}

func TestScratch(t *testing.T) {
	const dur = 300.0
	for _, sc := range []struct {
		name string
		f    func(int) adaptive.PacerConfig
	}{
		{"lin", func(G int) adaptive.PacerConfig {
			return adaptive.PacerConfig{Recover: time.Duration(3e9 * float64(G))}
		}},
	} {
		cfgFor = sc.f
		for _, sl := range []bool{false, true} {
			slotted = sl
			fmt.Println("==", sc.name, "slotted", sl)
			for _, G := range []int{1, 8, 32} {
				acc, rej := run(&bucket{cap: 100, depth: 100, tok: 100}, G, dur, 0.0005, true)
				report("bucket1s", acc, rej, 100, dur)
				acc, rej = run(&bucket{cap: 100, depth: 1, tok: 1}, G, dur, 0.0005, true)
				report("onetoken", acc, rej, 100, dur)
				acc, rej = run(&gcra{T: 0.01}, G, dur, 0.0005, true)
				report("gcra", acc, rej, 100, dur)
				for _, w := range []float64{1, 5, 60} {
					for _, ra := range []bool{false, true} {
						acc, rej = run(&window{w: w, q: 100 * w, ra: ra}, G, dur, 0.0005, ra)
						report(fmt.Sprintf("window%v ra=%v", w, ra), acc, rej, 100, dur)
					}
				}
				acc, rej = run(&bucket{cap: 100, depth: 100, tok: 100}, G, dur, 0.5, true)
				report("bucket lat500", acc, rej, 100, dur)
			}
		}
	}
}
