package throttle

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// timesFormattable reports whether r's attempt times fall in the years
// 0000-9999, the only ones time.RFC3339 can parse back. MarshalJSON writes
// other years (e.g. "10000-01-01T00:00:00Z") that UnmarshalJSON then
// rejects; no real record is that far from now, so the fuzz tests skip the
// round trip for them.
func timesFormattable(r Record) bool {
	for _, us := range []int64{r.FirstAttempt, r.LastAttempt} {
		if y := microsToTime(us).Year(); us != 0 && (y < 0 || y > 9999) {
			return false
		}
	}
	return true
}

// FuzzRecordUnmarshal: Record.UnmarshalJSON, the decoder of the JSON lines a
// run writes (and of the original Java tool's records), never panics on any
// input, and whatever it accepts is written back by MarshalJSON as valid
// UTF-8 JSON that decodes to the same Record.
func FuzzRecordUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"input":"{\"id\":7}","error":"Throttled by Client. Request rejection probability: 0.31","outcome":"client_throttled",` +
			`"rejection_probability":0.31,"attempts":1,"group":"3","first_attempt":"2026-01-02T03:04:05.123456Z","last_attempt":"2026-01-02T03:04:06Z"}`,
		`{"input":"c2xvd//+","input_encoding":"base64","error":"Server returned HTTP response code: 429","outcome":"server_throttled","status_code":429,"retry_after_ms":1000}`,
		`{"input":"{\"id\":8}","error":"Server returned HTTP response code: 429"}`, // the Java tool's form
		`{"input":"aGk=","input_encoding":"base64","grpc_code":8,"first_attempt":"2026-01-02T03:04:05.1234567+02:00"}`,
		`{"input":"!!","input_encoding":"base64"}`,
		`{"input":"a","input_encoding":"rot13"}`,
		`{"first_attempt":"yesterday"}`,
		`{"first_attempt":"1970-01-01T00:00:00Z"}`,
		`{"last_attempt":"9999-12-31T23:59:59-23:59"}`,
		`{"attempts":1e400}`,
		`{"input":"\ud800\u0000"}`,
		`{"input":"a","input":"b","unknown":[1,{}]}`,
		`null`, `[]`, `{`, ``, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Record
		if err := r.UnmarshalJSON(b); err != nil {
			return
		}
		out, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of %+v decoded from %q: %v", r, b, err)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("MarshalJSON wrote %q: want valid UTF-8 JSON", out)
		}
		if !timesFormattable(r) {
			return
		}
		var back Record
		if err := back.UnmarshalJSON(out); err != nil {
			t.Fatalf("UnmarshalJSON(%q), written by MarshalJSON: %v", out, err)
		}
		if diff := cmp.Diff(r, back, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip of %q through %q (-want +got):\n%s", b, out, diff)
		}
	})
}

// FuzzRecordMarshal: MarshalJSON never panics, fails only for a probability
// JSON cannot hold (NaN, ±Inf), always writes valid UTF-8 JSON, and the
// input bytes, whatever they are, come back unchanged; records whose texts
// are valid UTF-8 come back whole.
func FuzzRecordMarshal(f *testing.F) {
	f.Add([]byte(`{"id":7}`), "Throttled by Client. Request rejection probability: 0.31", "client_throttled", 0, 0, 0.31, 1, "3",
		int64(1767323045123456), int64(1767323046000000), int64(0))
	f.Add([]byte("slow\xff\xfe"), "Server returned HTTP response code: 429", "server_throttled", 429, 0, 0.0, 3, "group-1",
		int64(1), int64(2), int64(1000))
	f.Add([]byte{}, "caller panicked: \xff", "error", 0, 8, math.Inf(1), 0, "\xc3\x28", int64(-1), int64(0), int64(-5))
	f.Add([]byte("x"), "", "", -1, -1, math.NaN(), -1, "", int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64))
	f.Add([]byte("\x00\"\\\u2028"), "line\nbreak", "weird \"outcome\"", 599, 16, math.Copysign(0, -1), 1<<40, "<&>", int64(253402300799999999), int64(-62167219200000000), int64(1))
	f.Fuzz(func(t *testing.T, input []byte, errText, outcome string, status, grpc int, p float64, attempts int, group string,
		first, last, retryAfter int64) {
		r := Record{Input: input, Error: errText, Outcome: Outcome(outcome), StatusCode: status, GRPCCode: grpc, Probability: p,
			Attempts: attempts, Group: group, FirstAttempt: first, LastAttempt: last, RetryAfter: retryAfter}
		out, err := r.MarshalJSON()
		if math.IsNaN(p) || math.IsInf(p, 0) {
			if err == nil {
				t.Errorf("MarshalJSON with probability %v = %q, want an error", p, out)
			}
			return
		}
		if err != nil {
			t.Fatalf("MarshalJSON(%+v): %v", r, err)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("MarshalJSON(%+v) = %q: want valid UTF-8 JSON", r, out)
		}
		if !timesFormattable(r) {
			return
		}
		var back Record
		if err := back.UnmarshalJSON(out); err != nil {
			t.Fatalf("UnmarshalJSON(%q), written by MarshalJSON: %v", out, err)
		}
		if !bytes.Equal(back.Input, input) {
			t.Errorf("input %q came back as %q (through %q)", input, back.Input, out)
		}
		if !utf8.ValidString(errText) || !utf8.ValidString(outcome) || !utf8.ValidString(group) {
			return // JSON replaces invalid bytes in texts with U+FFFD
		}
		if diff := cmp.Diff(r, back, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip through %q (-want +got):\n%s", out, diff)
		}
	})
}
