package adaptive_test

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// model is a naive reference for the window semantics: it keeps every
// event with the window (FixedReset) or bucket (Sliding) number it was
// counted in, and recounts them on demand.
type model struct {
	sliding bool
	span    int64 // FixedReset interval or Sliding bucket, nanoseconds
	buckets int64 // Sliding: number of buckets
	started bool
	origin  int64 // FixedReset: time of the first event
	cur     int64 // newest window or bucket number seen
	events  []modelEvent
}

type modelEvent struct {
	n      int64 // window or bucket number
	accept bool  // an accept; otherwise a request
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// observe moves the model to now; start says whether now is an event.
func (m *model) observe(now int64, start bool) {
	if !m.started {
		if !start {
			return
		}
		m.started = true
		m.origin = now
		m.cur = m.number(now)
		return
	}
	m.cur = max(m.cur, m.number(now))
}

func (m *model) number(now int64) int64 {
	if m.sliding {
		return floorDiv(now, m.span)
	}
	return floorDiv(now-m.origin, m.span)
}

func (m *model) counts() (requests, accepts int64) {
	for _, e := range m.events {
		in := e.n == m.cur
		if m.sliding {
			in = e.n > m.cur-m.buckets
		}
		if !in {
			continue
		}
		if e.accept {
			accepts++
		} else {
			requests++
		}
	}
	return requests, accepts
}

func checkP(t *testing.T, what string, p float64) {
	t.Helper()
	if math.IsNaN(p) || p < 0 || p > 1 {
		t.Fatalf("%s: got p %v, want in [0, 1]", what, p)
	}
}

// FuzzProbability checks, for any K and any sequence of events, that p is
// in [0, 1] and never NaN, and that the SRE's counts and decisions
// match the naive model in both window modes.
//
// data[0] selects the mode (bit 0) and CountFailuresAsRejects (bit 1);
// data[1] the window length; then each pair of bytes is an operation and a
// signed time step in units of 100ms.
func FuzzProbability(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 2, 0, 0, 0}, 2.0, int64(10), int64(3))
	f.Add([]byte{1, 5, 0, 1, 1, 3, 2, 4, 0, 10, 0, 0xf0, 3, 7}, 1.1, int64(0), int64(0))
	f.Add([]byte{2, 9, 0, 0, 3, 0, 0, 0, 3, 0, 2, 0, 0, 0}, 1.0, int64(-1), int64(5))
	f.Add([]byte{3, 15, 0, 1, 0, 1, 0, 1, 4, 0, 5, 0x80, 0, 1, 6, 0, 7, 0}, 0.5, int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 10, 0, 10, 0, 10}, 1e-300, int64(1), int64(math.MinInt64))
	f.Add([]byte{0, 3}, math.NaN(), int64(5), int64(0))
	f.Add([]byte{1, 3}, math.Inf(1), int64(5), int64(0))
	f.Add([]byte{0, 3}, -2.0, int64(5), int64(0))
	f.Add([]byte{1, 3, 0, 0, 1, 0, 0, 0}, 1e308, int64(5), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, k float64, requests, accepts int64) {
		checkP(t, "Probability func", adaptive.Probability(requests, accepts, k))
		if len(data) < 2 {
			return
		}
		span := time.Second + time.Duration(data[1]%16)*300*time.Millisecond
		cfg := adaptive.SREConfig{
			K:                      k,
			Sliding:                data[0]&1 != 0,
			CountFailuresAsRejects: data[0]&2 != 0,
			ResetInterval:          span,
			WindowSize:             span,
			Bucket:                 time.Second,
		}
		var r float64
		src := rand.New(rand.NewPCG(uint64(len(data)), 7))
		th, err := adaptive.NewSRE(cfg, func() float64 { r = src.Float64(); return r }, 0)
		validK := k == 0 || (k > 0 && !math.IsInf(k, 0))
		if !validK {
			if err == nil {
				t.Fatalf("New with K %v: got nil error, want one", k)
			}
			return
		}
		if err != nil {
			t.Fatalf("New(%+v) error: %v", cfg, err)
		}
		m := &model{sliding: cfg.Sliding, span: int64(span)}
		if m.sliding {
			m.span = int64(time.Second)
			m.buckets = int64((span + time.Second - 1) / time.Second) // rounded up
		}
		effK := cmp.Or(k, adaptive.DefaultK)
		now := t0
		for i := 2; i+1 < len(data); i += 2 {
			op, step := data[i], int8(data[i+1])
			now = now.Add(time.Duration(step) * 100 * time.Millisecond)
			ns := now.UnixNano()
			switch op % 8 {
			case 0: // Decide
				m.observe(ns, true)
				mr, ma := m.counts()
				allow, p := decide(th, now)
				checkP(t, "Decide", p)
				if want := adaptive.Probability(mr, ma, effK); p != want {
					t.Fatalf("op %d Decide: got p %v, want %v from model counts (%d, %d)", i, p, want, mr, ma)
				}
				if allow != !(r < p) {
					t.Fatalf("op %d Decide: got allow %v with r %v and p %v", i, allow, r, p)
				}
				m.events = append(m.events, modelEvent{n: m.cur})
			case 1, 2, 3: // Record Accepted, Throttled, Failed
				o := adaptive.Outcome(op%8 - 1)
				m.observe(ns, true)
				record(th, now, o)
				if o == adaptive.Accepted || (o == adaptive.Failed && !cfg.CountFailuresAsRejects) {
					m.events = append(m.events, modelEvent{n: m.cur, accept: true})
				}
			case 4: // save and restore into a new SRE
				next, err := adaptive.NewSRE(cfg, func() float64 { r = src.Float64(); return r }, 0)
				if err != nil {
					t.Fatalf("New error: %v", err)
				}
				b, err := th.MarshalBinary()
				if err != nil {
					t.Fatalf("MarshalBinary error: %v", err)
				}
				if err := next.UnmarshalBinary(b); err != nil {
					t.Fatalf("UnmarshalBinary(MarshalBinary()) error: %v", err)
				}
				th = next
			case 5: // Probability
				m.observe(ns, false)
				checkP(t, "Probability", adaptive.P(th, now))
			case 6: // a long jump forward
				now = now.Add(24 * time.Hour)
				ns = now.UnixNano()
			case 7: // Counts only
				m.observe(ns, false)
			}
			m.observe(ns, false)
			gotR, gotA := adaptive.Counts(th, now)
			wantR, wantA := m.counts()
			if gotR != wantR || gotA != wantA {
				t.Fatalf("op %d (%d) at t0%+v: got counts (%d, %d), want (%d, %d)", i, op%8, now.Sub(t0), gotR, gotA, wantR, wantA)
			}
			checkP(t, "Probability", adaptive.P(th, now))
		}
	})
}

// FuzzPacerState checks the Pacer's state decoder on any bytes: it never
// panics; it refuses with ErrState, leaving the Pacer as a new one, or it
// accepts state of version 0x23, which it saves again byte for byte, or of
// version 0x22, which it saves as 0x23 with the unit not known (0). Then,
// for each byte of costs, the restored Pacer is asked about a request
// (cost: the byte as a signed number, times 13, so negative and free
// costs too): it never rejects, postpones to no earlier than now, and
// its budget is never negative.
func FuzzPacerState(f *testing.F) {
	p := mustNewPacer(f)
	now := t0
	for i := range 100 {
		d := p.Decide(now, 0, 1+i%50)
		if d.Verdict == adaptive.Postpone {
			now = d.RetryAt
			continue
		}
		p.Record(now, adaptive.Answer{Outcome: adaptive.Outcome(i % 3), Sent: now, RetryAfter: time.Duration(i%4) * time.Second})
	}
	valid, err := p.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	// A state of version 0x22 saved by the Pacer before costs.
	old, err := hex.DecodeString("22030000000000002240000000000000244000000000000024400016d02452728618c762653152728618806b98455272861800ca9429527286180000faed51728618010000000000000030000000000000003200000000000000010000000000000000f7c52a52728618")
	if err != nil {
		f.Fatal(err)
	}
	fresh, _ := mustNewPacer(f).MarshalBinary()
	f.Add(valid, []byte{1, 2, 3, 0, 0x80, 0x7f})
	f.Add(old, []byte{10, 200, 30})
	f.Add(fresh, []byte{1})
	f.Add([]byte{}, []byte{5, 5, 5})
	f.Add([]byte{0x23, 7}, []byte{})
	f.Add(append([]byte{0x23, 1}, make([]byte, 8*14)...), []byte{0xff, 1})
	f.Add(append([]byte{0x24, 1}, make([]byte, 8*16)...), []byte{0xff, 1})
	f.Add(append([]byte{0x25, 1}, make([]byte, 8*19)...), []byte{0xff, 1})
	f.Add(append([]byte{0x22, 3}, bytes.Repeat([]byte{0xff}, 8*13)...), []byte{9})
	f.Fuzz(func(t *testing.T, data, costs []byte) {
		p := mustNewPacer(t)
		err := p.UnmarshalBinary(data)
		got, merr := p.MarshalBinary()
		if merr != nil {
			t.Fatalf("MarshalBinary error: %v", merr)
		}
		switch {
		case err != nil:
			if !errors.Is(err, adaptive.ErrState) {
				t.Fatalf("got error %v, want ErrState", err)
			}
			if !bytes.Equal(got, fresh) {
				t.Fatalf("refused state left %x, want a new Pacer's %x", got, fresh)
			}
		case len(data) == 0:
			if !bytes.Equal(got, fresh) {
				t.Fatalf("empty state left %x, want a new Pacer's %x", got, fresh)
			}
		case data[0] == 0x25:
			if !bytes.Equal(got, data) {
				t.Fatalf("saved again as %x, want %x", got, data)
			}
		case data[0] == 0x24:
			want := append(append([]byte{0x25}, data[1:]...), make([]byte, 24)...)
			if !bytes.Equal(got, want) {
				t.Fatalf("saved again as %x, want %x", got, want)
			}
		case data[0] == 0x23:
			want := append(append([]byte{0x25}, data[1:]...), make([]byte, 40)...)
			if !bytes.Equal(got, want) {
				t.Fatalf("saved again as %x, want %x", got, want)
			}
		case data[0] == 0x22:
			want := append(append([]byte{0x25}, data[1:]...), make([]byte, 48)...)
			if !bytes.Equal(got, want) {
				t.Fatalf("saved again as %x, want %x", got, want)
			}
		default:
			t.Fatalf("accepted state of version %#x", data[0])
		}
		now := t0
		for i, b := range costs {
			now = now.Add(time.Duration(b%16) * time.Millisecond)
			cost := int(int8(b)) * 13
			d := p.Decide(now, 0, cost)
			switch d.Verdict {
			case adaptive.Send:
				if i%2 == 0 {
					p.Record(now, adaptive.Answer{Outcome: adaptive.Outcome(b % 3), Sent: now, RetryAfter: time.Duration(b%5) * time.Second})
				}
			case adaptive.Postpone:
				if d.RetryAt.Before(now) {
					t.Fatalf("request %d of cost %d: Postpone until %v, before now %v", i, cost, d.RetryAt, now)
				}
			default:
				t.Fatalf("request %d of cost %d: %v, want Send or Postpone", i, cost, d.Verdict)
			}
			checkP(t, "Pacer", d.Probability)
			if n := p.Budget(now, now.Add(time.Second)); n < 0 {
				t.Fatalf("request %d: budget %d, want at least 0", i, n)
			}
		}
		// What it saves now, it reads back.
		b, _ := p.MarshalBinary()
		if err := mustNewPacer(t).UnmarshalBinary(b); err != nil {
			t.Fatalf("UnmarshalBinary of its own state %x: %v", b, err)
		}
	})
}
