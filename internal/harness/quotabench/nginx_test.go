package quotabench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestNginxStats: nginx's log counts as the quota server's stats do, per
// client and per second, with each client's span, and the finish spread
// follows from the spans.
func TestNginxStats(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	reqs := []services.NginxRequest{
		{At: at(0), Client: "p1", Status: 200},
		{At: at(5), Client: "p2", Status: 429},
		{At: at(111), Client: "p2", Status: 200},
		{At: at(1222), Client: "p1", Status: 200},
		{At: at(1300), Client: "", Status: 200},
		{At: at(1333), Client: "p2", Status: 502},
		{At: at(2000), Client: "p2", Status: 200},
	}
	st, spans := nginxStats(reqs)
	if st.Accepted != 5 || st.Rejected != 1 || st.Errors != 1 {
		t.Errorf("totals %d/%d/%d, want 5 accepted, 1 rejected, 1 error", st.Accepted, st.Rejected, st.Errors)
	}
	want := map[string]testserver.Counts{
		"p1": {Accepted: 2, AcceptedCost: 2},
		"p2": {Accepted: 2, AcceptedCost: 2, Rejected: 1, RejectedCost: 1, Errors: 1, ErrorCost: 1},
	}
	if diff := cmp.Diff(want, st.Clients); diff != "" {
		t.Errorf("clients (-want +got):\n%s", diff)
	}
	if len(st.Series) != 3 || st.Series[0].Clients["p2"].Rejected != 1 || st.Series[1].Accepted != 2 {
		t.Errorf("series %+v, want 3 seconds: p2's 429 in the first, 2 accepted in the second", st.Series)
	}
	if sp := spans["p2"]; !sp.First.Equal(at(5)) || !sp.LastAccepted.Equal(at(2000)) {
		t.Errorf("p2's span %+v, want first at 5 ms and last accepted at 2000 ms", sp)
	}
	r := Result{First: at(0), LastAccepted: at(2000), Procs: []Proc{
		{Name: "p1", LastAccepted: spans["p1"].LastAccepted},
		{Name: "p2", LastAccepted: spans["p2"].LastAccepted},
	}}
	if got, want := r.FinishSpread(), 0.389; got < want-0.001 || got > want+0.001 {
		t.Errorf("finish spread %.3f, want %.3f ((2000 − 1222) ÷ 2000)", got, want)
	}
	r.Scenario.MaxSpread = 0.1
	if r.SpreadVerdict().OK {
		t.Errorf("spread verdict OK at %.3f, want not OK against 0.1", r.FinishSpread())
	}
}
