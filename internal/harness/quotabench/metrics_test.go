package quotabench

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// sec is one second of server stats: per client, accepted and rejected.
func sec(t int64, clients map[string][2]int64) testserver.Second {
	s := testserver.Second{T: t, Clients: map[string]testserver.Counts{}}
	for c, n := range clients {
		s.Clients[c] = testserver.Counts{Accepted: n[0], Rejected: n[1]}
		s.Accepted += n[0]
		s.Rejected += n[1]
	}
	return s
}

// stats sums the seconds into Stats, as the server does.
func stats(secs ...testserver.Second) testserver.Stats {
	st := testserver.Stats{Clients: map[string]testserver.Counts{}, Series: secs}
	for _, s := range secs {
		for c, n := range s.Clients {
			tot := st.Clients[c]
			tot.Accepted += n.Accepted
			tot.Rejected += n.Rejected
			st.Clients[c] = tot
		}
	}
	return st
}

func TestMeasure(t *testing.T) {
	clients := []string{"p1", "p2"}
	tests := []struct {
		name  string
		stats testserver.Stats
		want  Measure
	}{{
		// p1 from second 100 to 105, p2 from 101 to 104: every process
		// calls in whole seconds 102 and 103.
		name: "busy window between the last first call and the first last call",
		stats: stats(
			sec(100, map[string][2]int64{"p1": {10, 0}}),
			sec(101, map[string][2]int64{"p1": {10, 0}, "p2": {5, 1}}),
			sec(102, map[string][2]int64{"p1": {5, 1}, "p2": {5, 0}}),
			sec(103, map[string][2]int64{"p1": {4, 0}, "p2": {5, 0}}),
			sec(104, map[string][2]int64{"p1": {3, 0}, "p2": {2, 0}}),
			sec(105, map[string][2]int64{"p1": {1, 0}}),
		),
		want: Measure{
			Accepted: 50, Rejected: 2, Waste: 2.0 / 52,
			BusyFrom: 102, BusyTo: 103, BusySeconds: 2,
			BusyAccepted: 19, BusyRejected: 1, CapacityLeft: 20, Utilisation: 19.0 / 20,
		},
	}, {
		name: "the competitor's accepted calls leave less capacity",
		stats: stats(
			sec(10, map[string][2]int64{"p1": {1, 0}, "p2": {1, 0}, competitorName: {3, 0}}),
			sec(11, map[string][2]int64{"p1": {3, 0}, "p2": {3, 0}, competitorName: {3, 2}}),
			sec(12, map[string][2]int64{"p1": {1, 0}, "p2": {1, 0}, competitorName: {3, 0}}),
		),
		want: Measure{
			Accepted: 10, CompetitorAccepted: 9, CompetitorRejected: 2,
			BusyFrom: 11, BusyTo: 11, BusySeconds: 1,
			BusyAccepted: 6, CapacityLeft: 7, Utilisation: 6.0 / 7,
		},
	}, {
		name:  "a process that never called: no window",
		stats: stats(sec(1, map[string][2]int64{"p1": {4, 4}}), sec(2, map[string][2]int64{"p1": {4, 4}})),
		want:  Measure{Accepted: 8, Rejected: 8, Waste: 0.5},
	}, {
		name:  "nothing at all",
		stats: stats(),
		want:  Measure{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := measure(tt.stats, clients, 10)
			got.Series = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("measure (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSeries fills the seconds in which nothing was counted.
func TestSeries(t *testing.T) {
	st := stats(
		sec(7, map[string][2]int64{"p1": {2, 1}, competitorName: {1, 0}}),
		sec(5, map[string][2]int64{"p1": {1, 0}, "p2": {1, 0}}),
	)
	want := []Point{
		{T: 5, Accepted: 2, Clients: 2},
		{T: 6},
		{T: 7, Accepted: 2, Rejected: 1, CompetitorAccepted: 1, Clients: 1},
	}
	if diff := cmp.Diff(want, series(st, []string{"p1", "p2"})); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

func TestPhases(t *testing.T) {
	m := Measure{BusyFrom: 2, BusyTo: 7, Series: []Point{
		{T: 1, Accepted: 100}, // before the window: not counted
		{T: 2, Accepted: 10}, {T: 3, Accepted: 10},
		{T: 4, Accepted: 3, Rejected: 5}, {T: 5, Rejected: 7},
		{T: 6, Accepted: 9}, {T: 7, Accepted: 11},
		{T: 8, Accepted: 100}, // after it
	}}
	before, during, after := phases(m, 4, 6)
	want := []Phase{{2, 20, 0}, {2, 3, 12}, {2, 20, 0}}
	if diff := cmp.Diff(want, []Phase{before, during, after}); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if got := during.RejectedRate(); got != 6 {
		t.Errorf("RejectedRate = %v, want 6", got)
	}
	if got := (Phase{}).AcceptedRate(); got != 0 {
		t.Errorf("empty AcceptedRate = %v, want 0", got)
	}
}

func TestTimeRatio(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	procs := make([]Proc, 3)
	tests := []struct {
		name        string
		r           Result
		span, ideal time.Duration
		ratio       float64
	}{{
		name: "600 elements at 9/s in 70 s",
		r:    Result{Elements: 200, Procs: procs, QuotaRate: 9, First: t0, LastAccepted: t0.Add(70 * time.Second)},
		span: 70 * time.Second, ideal: 600 * time.Second / 9, ratio: 70.0 / (600.0 / 9),
	}, {
		name: "one process, exactly at its pace",
		r:    Result{Elements: 600, Procs: procs[:1], QuotaRate: 10, First: t0, LastAccepted: t0.Add(60 * time.Second)},
		span: 60 * time.Second, ideal: 60 * time.Second, ratio: 1,
	}, {
		name:  "nothing accepted",
		r:     Result{Elements: 200, Procs: procs, QuotaRate: 9, First: t0},
		ideal: 600 * time.Second / 9,
	}, {
		name: "no processes ran",
		r:    Result{Elements: 200, QuotaRate: 9},
	}, {
		name: "no rate: not a strict scenario",
		r:    Result{Elements: 200, Procs: procs, First: t0, LastAccepted: t0.Add(time.Second)},
		span: time.Second,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Span(); got != tt.span {
				t.Errorf("Span: got %v, want %v", got, tt.span)
			}
			if got := tt.r.IdealTime(); got != tt.ideal {
				t.Errorf("IdealTime: got %v, want %v", got, tt.ideal)
			}
			if got := tt.r.TimeRatio(); math.Abs(got-tt.ratio) > 1e-9 {
				t.Errorf("TimeRatio: got %v, want %v", got, tt.ratio)
			}
		})
	}
}

// TestSpanOfClients takes the earliest first call and the latest accepted
// one over the pipeline processes, from the server's own timestamps.
func TestSpanOfClients(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	now := t0
	h, err := testserver.NewHandler(testserver.Config{Quota: 10, Mode: testserver.GCRA, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	call := func(after time.Duration, client string) {
		now = now.Add(after)
		req := httptest.NewRequest("POST", "/api", strings.NewReader("x"))
		req.Header.Set(testserver.ClientHeader, client)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	call(0, competitorName)                    // not a pipeline
	call(50*time.Millisecond, "p2")            // rejected: the pipelines' first call
	call(100*time.Millisecond, "p1")           // accepted
	call(150*time.Millisecond, "p2")           // accepted: the last
	call(10*time.Millisecond, "p1")            // rejected
	call(200*time.Millisecond, competitorName) // accepted, not a pipeline
	first, last := span(h.Span, []string{"p1", "p2", "p3"})
	if want := t0.Add(50 * time.Millisecond); !first.Equal(want) {
		t.Errorf("first: got %v, want %v", first, want)
	}
	if want := t0.Add(300 * time.Millisecond); !last.Equal(want) {
		t.Errorf("last accepted: got %v, want %v", last, want)
	}
}
