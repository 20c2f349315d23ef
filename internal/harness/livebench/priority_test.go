package livebench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestTap(t *testing.T) {
	// The server behind: 429 for odd sequence numbers, 200 otherwise;
	// it must see each body whole.
	var bodies []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if seq, ok := seqOf(b); ok && seq%2 != 0 {
			http.Error(w, "over quota", http.StatusTooManyRequests)
			return
		}
		w.Write(b)
	})
	tp := &tap{next: next, accepted: map[int]time.Time{}}
	if tp.seen() {
		t.Fatal("seen before any call")
	}
	calls := []struct {
		path, body string
		status     int
	}{
		{"/stats", "", http.StatusOK},             // not a call
		{"/api", `{"seq":1,"tier":"low"}`, 429},   // rejected
		{"/api", `{"seq":2,"tier":"high"}`, 200},  // accepted
		{"/api", `{"seq":2,"tier":"high"}`, 200},  // again: the first counts
		{"/api/x", `{"seq":4,"tier":"low"}`, 200}, // below /api
		{"/api", `not json`, 200},                 // no sequence number
	}
	var when []time.Time
	for _, c := range calls {
		w := httptest.NewRecorder()
		when = append(when, time.Now())
		tp.ServeHTTP(w, httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(c.body)))
		if w.Code != c.status {
			t.Errorf("%s %s: got status %d, want %d", c.path, c.body, w.Code, c.status)
		}
	}
	if got, want := strings.Join(bodies, "|"), `|{"seq":1,"tier":"low"}|{"seq":2,"tier":"high"}|{"seq":2,"tier":"high"}|{"seq":4,"tier":"low"}|not json`; got != want {
		t.Errorf("bodies the server got: %s, want %s", got, want)
	}
	if !tp.seen() {
		t.Error("not seen after calls")
	}
	got := tp.acceptedTimes()
	if len(got) != 2 {
		t.Fatalf("accepted: got %v, want sequence numbers 2 and 4", got)
	}
	if at := got[2]; at.Before(when[2]) || !at.Before(when[3]) {
		t.Errorf("seq 2 accepted at %v: want the first call's receipt, in [%v, %v)", at, when[2], when[3])
	}
	if _, ok := got[4]; !ok {
		t.Errorf("seq 4 (below /api) not recorded: %v", got)
	}
}
