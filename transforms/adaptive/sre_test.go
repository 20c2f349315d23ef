package adaptive

import (
	"errors"
	"testing"
	"time"
)

func TestSREPolicy(t *testing.T) {
	zero := func() float64 { return 0 }
	tests := []struct {
		name     string
		postpone time.Duration
		want     Verdict
	}{
		{"rejects", 0, Reject},
		{"postpones", time.Second, Postpone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSRE(SREConfig{}, zero, tc.postpone)
			if err != nil {
				t.Fatal(err)
			}
			// One request rejected by the backend: p = 1/2 > r = 0.
			if d := s.Decide(at(0), 0, 1); d.Verdict != Send || d.Probability != 0 {
				t.Fatalf("first decision %+v, want Send with p 0", d)
			}
			s.Record(at(0), Answer{Outcome: Throttled, Sent: at(0)})
			d := s.Decide(at(time.Millisecond), 0, 1)
			if d.Verdict != tc.want || d.Probability != 0.5 {
				t.Fatalf("decision %+v, want %v with p 0.5", d, tc.want)
			}
			if tc.want == Postpone && !d.RetryAt.Equal(at(time.Millisecond+tc.postpone)) {
				t.Errorf("RetryAt %v, want now + %v", d.RetryAt, tc.postpone)
			}
			// The request still counts, as in the SRE rule.
			if r, a := Counts(s, at(time.Millisecond)); r != 2 || a != 0 {
				t.Errorf("counts %d requests %d accepts, want 2 and 0", r, a)
			}
		})
	}
}

func TestSREPolicyInFlight(t *testing.T) {
	s, _ := NewSRE(SREConfig{}, func() float64 { return 0 }, 0)
	s.Decide(at(0), 0, 1)
	s.Record(at(0), Answer{Outcome: Throttled, Sent: at(0)})
	// With the request just counted in flight, p is as if it were not made.
	if d := s.Decide(at(time.Millisecond), 1, 1); d.Verdict != Send {
		t.Errorf("decision with one in flight %+v, want Send", d)
	}
}

func TestSREPolicyState(t *testing.T) {
	s, _ := NewSRE(SREConfig{}, func() float64 { return 0.99 }, 0)
	for i := range 10 {
		s.Decide(at(time.Duration(i)), 0, 1)
		s.Record(at(time.Duration(i)), Answer{Outcome: Accepted})
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	q, _ := NewSRE(SREConfig{}, nil, 0)
	if err := q.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if r, a := Counts(q, at(10)); r != 10 || a != 10 {
		t.Errorf("restored counts %d %d, want 10 10", r, a)
	}
	for _, bad := range [][]byte{{2}, {sreVersion, '{'}, append([]byte{sreVersion}, `{"Started":true,"Requests":-1}`...)} {
		if err := q.UnmarshalBinary(bad); !errors.Is(err, ErrState) {
			t.Errorf("UnmarshalBinary(%q) = %v, want ErrState", bad, err)
		}
		if r, _ := Counts(q, at(10)); r != 0 {
			t.Errorf("after refused state %q: %d requests, want reset", bad, r)
		}
	}
	p, _ := NewPacer(PacerConfig{})
	pb, _ := p.MarshalBinary()
	if err := q.UnmarshalBinary(pb); !errors.Is(err, ErrState) {
		t.Errorf("SRE.UnmarshalBinary(pacer state) = %v, want ErrState", err)
	}
}

func TestNewSREErrors(t *testing.T) {
	if _, err := NewSRE(SREConfig{}, nil, -time.Second); err == nil {
		t.Error("NewSRE with a negative postponement: nil error")
	}
	if _, err := NewSRE(SREConfig{K: -1}, nil, 0); err == nil {
		t.Error("NewSRE with K -1: nil error")
	}
}

// TestSREStateCompat: state written by the SRE policy of the previous
// version (version 0x11, JSON of the exported State of then, paced fields
// included and zero) is restored.
func TestSREStateCompat(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name                      string
		cfg                       SREConfig
		data                      string
		wantRequests, wantAccepts int64
	}{
		{"fixed", SREConfig{},
			"\x11{\"Started\":true,\"Window\":0,\"Start\":1700000000000000000,\"Requests\":5,\"Accepts\":3,\"BucketNanos\":0,\"Head\":0,\"BucketRequests\":null,\"BucketAccepts\":null,\"Mode\":0,\"Limited\":false,\"Rate\":0,\"Tokens\":0,\"Refilled\":0,\"Good\":0,\"BlockedUntil\":0,\"Streak\":0,\"Hit\":0,\"RunHit\":0,\"Climb\":false,\"Dark\":0,\"Demand\":0,\"IntervalStart\":0,\"Sent\":0,\"Rejected\":0,\"IntervalAccepted\":0,\"IntervalThrottled\":0,\"PrevDecisions\":0,\"PrevRejected\":0}",
			5, 3},
		{"sliding", SREConfig{Sliding: true, WindowSize: 3 * time.Second, Bucket: time.Second},
			"\x11{\"Started\":true,\"Window\":1,\"Start\":0,\"Requests\":5,\"Accepts\":3,\"BucketNanos\":1000000000,\"Head\":1700000002,\"BucketRequests\":[1,2,2],\"BucketAccepts\":[1,1,1],\"Mode\":0,\"Limited\":false,\"Rate\":0,\"Tokens\":0,\"Refilled\":0,\"Good\":0,\"BlockedUntil\":0,\"Streak\":0,\"Hit\":0,\"RunHit\":0,\"Climb\":false,\"Dark\":0,\"Demand\":0,\"IntervalStart\":0,\"Sent\":0,\"Rejected\":0,\"IntervalAccepted\":0,\"IntervalThrottled\":0,\"PrevDecisions\":0,\"PrevRejected\":0}",
			3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSRE(tc.cfg, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.UnmarshalBinary([]byte(tc.data)); err != nil {
				t.Fatalf("UnmarshalBinary error: %v", err)
			}
			// Read 3 s after the first event, as the previous version did.
			if r, a := Counts(s, t0.Add(3*time.Second)); r != tc.wantRequests || a != tc.wantAccepts {
				t.Errorf("got counts (%d, %d), want (%d, %d)", r, a, tc.wantRequests, tc.wantAccepts)
			}
		})
	}
}

// TestSREIgnoresCost: the SRE rule counts one request whatever the cost,
// so it decides on a request of any cost as on one of cost 1, and sets no
// budget.
func TestSREIgnoresCost(t *testing.T) {
	for _, cost := range []int{-1, 0, 1, 100} {
		rnd := func() float64 { return 0.4 }
		a, _ := NewSRE(SREConfig{}, rnd, 0)
		b, _ := NewSRE(SREConfig{}, rnd, 0)
		for i := range 20 {
			now := at(time.Duration(i) * time.Millisecond)
			want, got := a.Decide(now, 0, 1), b.Decide(now, 0, cost)
			if got != want {
				t.Fatalf("cost %d, request %d: got %+v, want %+v as with cost 1", cost, i, got, want)
			}
			if got.Verdict == Send {
				a.Record(now, Answer{Outcome: Throttled, Sent: now})
				b.Record(now, Answer{Outcome: Throttled, Sent: now})
			}
		}
		if req, _ := Counts(b, at(time.Second)); req != 20 {
			t.Errorf("cost %d: got %d requests counted, want 20", cost, req)
		}
		if n := b.Budget(at(time.Second), at(time.Hour)); n != -1 {
			t.Errorf("cost %d: got budget %d, want -1", cost, n)
		}
	}
}
