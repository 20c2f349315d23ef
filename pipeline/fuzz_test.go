package pipeline

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func TestScratch(t *testing.T) {
	for _, n := range []int{10, 40, 60, 100} {
		e := Element{Data: make([]byte, n)}
		b, _ := json.Marshal(e)
		t.Logf("payload %d -> element JSON %d: %s", n, len(b), b)
	}
	r := throttle.Record{Input: []byte("x"), FirstAttempt: 253402300800000000 + 1} // year 10000
	b, err := r.MarshalJSON()
	t.Logf("marshal %s %v", b, err)
	var r2 throttle.Record
	t.Logf("unmarshal err %v", r2.UnmarshalJSON(b))
	s, err := formatResult(Result{Input: Element{Data: []byte("a")}, Response: []byte("\"\xff\"")})
	t.Logf("formatResult %q %v utf8=%v valid=%v", s, err, utf8.ValidString(s), json.Valid([]byte(s)))
	a := deadLetterAttributes(throttle.Record{Error: "boom \xff"}, "", "p")
	t.Logf("attr error %q valid=%v", a[AttrError], utf8.ValidString(a[AttrError]))
}
