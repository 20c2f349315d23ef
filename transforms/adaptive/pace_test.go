package adaptive

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func newTestPacer(t *testing.T, cfg PacerConfig) *Pacer {
	t.Helper()
	p, err := NewPacer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sendAll asks p at every step from start to end and returns the times of
// the sends.
func sendAll(p *Pacer, start, end, step time.Duration) []time.Duration {
	var sent []time.Duration
	for d := start; d < end; d += step {
		if p.Decide(at(d), 0, 1).Verdict == Send {
			sent = append(sent, d)
		}
	}
	return sent
}

func TestPacerSpacesSends(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 10, Beta: 0.7})
	// One rejection ends slow start at 10/s; the rate is then 7/s and
	// climbs back to 10/s over Recover.
	if d := p.Decide(at(0), 0, 1); d.Verdict != Send {
		t.Fatalf("first decision %v, want Send", d.Verdict)
	}
	p.Record(at(time.Millisecond), Answer{Outcome: Throttled, Sent: at(0)})
	if got, want := p.rate, 0.7*p.ceil; math.Abs(got-want) > 1e-9 || math.Abs(p.ceil-10) > 0.01 {
		t.Fatalf("rate after a rejection %v, want %v", got, want)
	}
	d := p.Decide(at(2*time.Millisecond), 0, 1)
	if d.Verdict != Postpone || !d.RetryAt.Equal(at(100*time.Millisecond)) {
		t.Fatalf("decision before the next slot %+v, want Postpone until 100ms", d)
	}
	sent := sendAll(p, 100*time.Millisecond, 2*time.Second, time.Millisecond)
	for i := 1; i < len(sent); i++ {
		gap := sent[i] - sent[i-1]
		// The rate is between 7/s and 10/s during the first Recover.
		if gap < 100*time.Millisecond || gap > 143*time.Millisecond+time.Millisecond {
			t.Errorf("gap %v between sends %d and %d, want 1/rate with the rate in [7, 10]/s", gap, i-1, i)
		}
	}
}

func TestPacerSlowStartDoubles(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 4})
	tests := []struct {
		from, to time.Duration
		lo, hi   int
	}{
		{0, time.Second, 5, 6},                 // 4/s → 8/s: about 6 sends
		{time.Second, 2 * time.Second, 10, 12}, // 8/s → 16/s
		{2 * time.Second, 3 * time.Second, 21, 24},
	}
	for _, tc := range tests {
		n := len(sendAll(p, tc.from, tc.to, time.Millisecond))
		if n < tc.lo || n > tc.hi {
			t.Errorf("sends in [%v, %v): %d, want %d to %d", tc.from, tc.to, n, tc.lo, tc.hi)
		}
	}
}

func TestPacerDecreasesOncePerCongestion(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 100, Beta: 0.7, Backoff: 0.7})
	var sent []time.Time
	for d := time.Duration(0); d < 100*time.Millisecond; d += time.Millisecond {
		if p.Decide(at(d), len(sent), 1).Verdict == Send {
			sent = append(sent, at(d))
		}
	}
	if len(sent) < 8 {
		t.Fatalf("%d sends, want about 10", len(sent))
	}
	// Every call in flight comes back rejected: one decrease.
	for _, s := range sent {
		p.Record(at(200*time.Millisecond), Answer{Outcome: Throttled, Sent: s})
	}
	r := p.rate
	if want := 0.7 * p.ceil; math.Abs(r-want) > 1e-9 {
		t.Errorf("rate %v after one congestion, want 0.7 × %v", r, p.ceil)
	}
	// A request sent after the decrease and rejected cuts again.
	p.Record(at(300*time.Millisecond), Answer{Outcome: Throttled, Sent: at(250 * time.Millisecond)})
	if got := p.rate; math.Abs(got-0.7*p.ceil) > 1e-9 || got >= r {
		t.Errorf("rate %v after a second congestion, want below %v", got, r)
	}
}

func TestPacerCubicRecovery(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 50, Beta: 0.7, Recover: 2 * time.Second})
	p.Decide(at(0), 0, 1)
	p.Record(at(0), Answer{Outcome: Throttled, Sent: at(0)})
	p.Record(at(0), Answer{Outcome: Accepted, Sent: at(0)})
	tests := []struct {
		after time.Duration
		want  float64
	}{
		{0, 35},                         // β·50
		{time.Second, 50 * (1 - 0.3/8)}, // halfway: ceil·(1 − (1−β)/8)
		{2 * time.Second, 50},           // back at the ceiling after Recover
		{4 * time.Second, 65},           // ceil·(1 + (1−β))
		{6 * time.Second, 50 * (1 + 0.3*8)},
	}
	for _, tc := range tests {
		if got := p.curve(unixNanos(at(tc.after))); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("rate %v after the decrease: %v, want %v", tc.after, got, tc.want)
		}
	}
}

func TestPacerDarkSpell(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 20, Beta: 0.7, Backoff: 0.7})
	p.Decide(at(0), 0, 1)
	// A used-up quota window: everything is rejected through three
	// decreases, then the window resets.
	for i := range 3 {
		s := at(time.Duration(i) * time.Second)
		p.Record(s.Add(time.Millisecond), Answer{Outcome: Throttled, Sent: s})
	}
	low := p.rate
	if want := 20 * 0.7 * 0.7 * 0.7; low > want+1 {
		t.Fatalf("rate %v after three decreases, want about %v", low, want)
	}
	p.Record(at(3*time.Second), Answer{Outcome: Accepted, Sent: at(3 * time.Second)})
	if got, want := p.curve(unixNanos(at(3*time.Second))), 0.7*p.spell; math.Abs(got-want) > 1e-6 || p.spell < 19 {
		t.Errorf("rate after the spell %v, want β × the rate where it began (%v)", got, want)
	}
	// One decrease followed by an accept is congestion, not a spell.
	q := newTestPacer(t, PacerConfig{StartRate: 20})
	q.Decide(at(0), 0, 1)
	q.Record(at(time.Millisecond), Answer{Outcome: Throttled, Sent: at(0)})
	r := q.rate
	q.Record(at(2*time.Millisecond), Answer{Outcome: Accepted, Sent: at(0)})
	if got := q.curve(unixNanos(at(2 * time.Millisecond))); got > r+0.01 {
		t.Errorf("rate %v after one decrease and an accept, want about %v", got, r)
	}
}

func TestPacerRetryAfterBlocks(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 100, Beta: 0.7, Backoff: 0.7})
	p.Decide(at(0), 0, 1)
	p.Record(at(10*time.Millisecond), Answer{Outcome: Throttled, Sent: at(0), RetryAfter: 5 * time.Second})
	d := p.Decide(at(time.Second), 0, 1)
	if want := at(10*time.Millisecond + 5*time.Second - retryAfterSlack); d.Verdict != Postpone || !d.RetryAt.Equal(want) {
		t.Errorf("decision during Retry-After %+v, want Postpone until %v", d, want)
	}
	if d := p.Decide(at(4*time.Second+10*time.Millisecond), 0, 1); d.Verdict != Send {
		t.Errorf("decision after Retry-After %v, want Send", d.Verdict)
	}
	// A Retry-After within the slack does not block.
	q := newTestPacer(t, PacerConfig{StartRate: 100})
	q.Decide(at(0), 0, 1)
	q.Record(at(0), Answer{Outcome: Throttled, Sent: at(0), RetryAfter: time.Second})
	if q.blocked != 0 {
		t.Errorf("blocked until %v by a one-second Retry-After, want not blocked", q.blocked)
	}
}

func TestPacerIdleDoesNotRaiseRate(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 10})
	p.Decide(at(0), 0, 1)
	// An hour without requests, then a burst: slow start resumes from
	// where it was, not from 10·2^3600.
	sent := sendAll(p, time.Hour, time.Hour+time.Second, time.Millisecond)
	if n := len(sent); n > 16 {
		t.Errorf("%d sends in the first second after an idle hour, want at most about 15", n)
	}
}

func TestPacerNeverRejects(t *testing.T) {
	p := newTestPacer(t, PacerConfig{})
	for i := range 10000 {
		now := at(time.Duration(i) * 7 * time.Millisecond)
		d := p.Decide(now, i%3, 1)
		if d.Verdict == Reject {
			t.Fatalf("decision %d: Reject, want Send or Postpone", i)
		}
		if d.Verdict == Postpone && !d.RetryAt.After(now) {
			t.Fatalf("decision %d: Postpone until %v, not after now %v", i, d.RetryAt, now)
		}
		if d.Verdict == Send && i%5 == 0 {
			p.Record(now, Answer{Outcome: Throttled, Sent: now})
		}
	}
}

func TestPacerStateRoundTrip(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 10})
	for i := range 50 {
		now := at(time.Duration(i) * 30 * time.Millisecond)
		if p.Decide(now, 0, 1).Verdict == Send && i%7 == 0 {
			p.Record(now, Answer{Outcome: Throttled, Sent: now, RetryAfter: 2 * time.Second})
		}
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q := newTestPacer(t, PacerConfig{StartRate: 10})
	if err := q.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q, p) {
		t.Errorf("restored %+v, want %+v", *q, *p)
	}
	later := at(10 * time.Second)
	if a, b := p.Decide(later, 0, 1), q.Decide(later, 0, 1); a != b {
		t.Errorf("decisions differ after the round trip: %+v and %+v", a, b)
	}
}

func TestPacerUnmarshalRefuses(t *testing.T) {
	good, _ := newTestPacer(t, PacerConfig{}).MarshalBinary()
	nan := append([]byte(nil), good...)
	for i := 2; i < 10; i++ {
		nan[i] = 0xff
	}
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty resets", nil, nil},
		{"valid", good, nil},
		{"other version", append([]byte{99}, good[1:]...), ErrState},
		{"short", good[:10], ErrState},
		{"NaN rate", nan, ErrState},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPacer(t, PacerConfig{})
			p.Decide(at(0), 0, 1)
			err := p.UnmarshalBinary(tc.data)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil && p.started {
				t.Errorf("refused state left the pacer started, want it reset")
			}
		})
	}
}

func TestPacerConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  PacerConfig
		want string
	}{
		{PacerConfig{}, ""},
		{PacerConfig{StartRate: -1}, "StartRate"},
		{PacerConfig{Beta: 1}, "Beta"},
		{PacerConfig{Beta: math.NaN()}, "Beta"},
		{PacerConfig{Recover: -time.Second}, "Recover"},
		{PacerConfig{MinRate: 6}, "MinRate"},
	}
	for _, tc := range tests {
		err := tc.cfg.validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v, want nil", tc.cfg, err)
		case tc.want != "" && (err == nil || !contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestPacerDarkSpellBacksOff(t *testing.T) {
	tests := []struct {
		beta, backoff float64
	}{
		{0.9, 0.7},
		{0.9, 0.5},
		{0.7, 0.7},
	}
	for _, tc := range tests {
		p := newTestPacer(t, PacerConfig{StartRate: 100, Beta: tc.beta, Backoff: tc.backoff})
		p.Decide(at(0), 0, 1)
		p.Record(at(time.Millisecond), Answer{Outcome: Throttled, Sent: at(0)})
		first := p.rate
		if want := tc.beta * 100; math.Abs(first-want) > 1 {
			t.Errorf("β %v: rate %v after the first rejection, want about %v", tc.beta, first, want)
		}
		// Still rejected after the decrease: each further rejection backs off.
		p.Record(at(50*time.Millisecond), Answer{Outcome: Throttled, Sent: at(20 * time.Millisecond)})
		if got, want := p.rate, tc.backoff*first; math.Abs(got-want) > 1e-6 {
			t.Errorf("β %v, backoff %v: rate %v after a further rejection, want %v", tc.beta, tc.backoff, got, want)
		}
	}
}

func TestPacerProbesOneAtATimeWhenDark(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 100})
	p.Decide(at(0), 0, 1)
	p.Record(at(time.Millisecond), Answer{Outcome: Throttled, Sent: at(0)})
	// Dark: the next slot sends one probe…
	var probe time.Time
	for d := 2 * time.Millisecond; d < 100*time.Millisecond; d += time.Millisecond {
		if p.Decide(at(d), 0, 1).Verdict == Send {
			probe = at(d)
			break
		}
	}
	if probe.IsZero() {
		t.Fatal("no probe within 100ms of the decrease")
	}
	// …and nothing more until it is answered, however many slots pass.
	for d := time.Duration(0); d < 500*time.Millisecond; d += time.Millisecond {
		if v := p.Decide(probe.Add(d+time.Millisecond), 0, 1).Verdict; v != Postpone {
			t.Fatalf("decision %v after the probe, before its answer: %v, want Postpone", d, v)
		}
	}
	p.Record(probe.Add(501*time.Millisecond), Answer{Outcome: Accepted, Sent: probe})
	next := probe.Add(502 * time.Millisecond)
	if v := p.Decide(next, 0, 1).Verdict; v != Send {
		t.Errorf("decision after the probe was accepted: %v, want Send", v)
	}
}

func TestPacerBudget(t *testing.T) {
	p := newTestPacer(t, PacerConfig{StartRate: 10})
	if got := p.Budget(at(0), at(time.Second)); got != 1 {
		t.Errorf("budget before the first request: %d, want 1", got)
	}
	p.Decide(at(0), 0, 1) // sends; the next slot is at 100ms
	tests := []struct {
		now, until time.Duration
		want       int
	}{
		{0, 50 * time.Millisecond, 0},  // before the next slot
		{0, 100 * time.Millisecond, 1}, // the next slot
		{0, 350 * time.Millisecond, 3}, // 100, 200, 300 ms
		{200 * time.Millisecond, 200 * time.Millisecond, 1},
	}
	for _, tc := range tests {
		if got := p.Budget(at(tc.now), at(tc.until)); got != tc.want {
			t.Errorf("Budget(%v, %v) = %d, want %d", tc.now, tc.until, got, tc.want)
		}
	}
	// Dark: one probe, none while it is unanswered.
	p.Record(at(10*time.Millisecond), Answer{Outcome: Throttled, Sent: at(0)})
	if got := p.Budget(at(time.Second), at(2*time.Second)); got != 1 {
		t.Errorf("budget while dark: %d, want 1", got)
	}
	p.Decide(at(time.Second), 0, 1)
	if got := p.Budget(at(time.Second), at(2*time.Second)); got != 0 {
		t.Errorf("budget while a probe is unanswered: %d, want 0", got)
	}
}

func TestPacerKnownRate(t *testing.T) {
	// A known rate of 9/s: the first second sends at 9/s, not in slow
	// start from StartRate (5/s, which sends 7 in its first second).
	p := newTestPacer(t, PacerConfig{Rate: 9})
	sent := sendAll(p, 0, time.Second, time.Millisecond)
	if len(sent) != 9 {
		t.Fatalf("sends in the first second %d (%v), want 9", len(sent), sent)
	}
	// Asked at every chance for 20 s, it never goes above the known rate.
	sent = sendAll(p, time.Second, 21*time.Second, time.Millisecond)
	if got := p.rate; got != 9 || len(sent) < 178 || len(sent) > 180 { // 1/9 s is 111.1 ms, asked every ms
		t.Errorf("after 20 s: rate %v and %d sends, want 9 and 178 to 180", got, len(sent))
	}
	// A rejection cuts below the known rate, and the rate climbs back to it.
	p.Record(at(21*time.Second), Answer{Outcome: Throttled, Sent: at(sent[len(sent)-1])})
	if got, want := p.rate, defaultBeta*9; math.Abs(got-want) > 1e-9 {
		t.Errorf("rate after a rejection %v, want %v", got, want)
	}
	p.Record(at(21*time.Second+time.Millisecond), Answer{Outcome: Accepted, Sent: at(21 * time.Second)})
	sendAll(p, 21*time.Second, 31*time.Second, time.Millisecond)
	if got := p.rate; got != 9 {
		t.Errorf("rate 10 s after a rejection %v, want back at 9", got)
	}
	if _, err := NewPacer(PacerConfig{Rate: -1}); err == nil {
		t.Error("NewPacer with a negative Rate: no error")
	}
}
