package pipeline

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// Fuzz tests of the pipeline's decoders of external input (dead-letter
// attributes) and of its encoders of output lines and attributes. Plain
// `go test` runs their seed corpus; `go test -fuzz=FuzzX` explores.

// attemptsOracle is the documented grammar of the "attempts" attribute: a
// decimal integer that fits in an int, optionally signed ("+3" and "-0" are
// accepted, as strconv.Atoi does), not negative. It returns -1 for anything
// else.
func attemptsOracle(s string) int {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return -1
	}
	n := 0
	for _, c := range digits {
		if n > (math.MaxInt-int(c-'0'))/10 {
			return -1 // does not fit
		}
		n = 10*n + int(c-'0')
	}
	if s[0] == '-' && n != 0 {
		return -1
	}
	return n
}

// FuzzMessageToElement: decoding a message read from a (dead-letter)
// subscription never panics, keeps the data and attributes, takes the
// original message ID from the "message_id" attribute when there is one, and
// reads the "attempts" attribute as a non-negative count, or -1 (malformed,
// routed to errors by Reprocess) for anything that is not one.
func FuzzMessageToElement(f *testing.F) {
	for _, a := range []string{"0", "1", "5", "007", "+3", "-0", "-1", "many", "", " 2", "2 ", "1.5", "1e3", "0x10",
		"9223372036854775807", "9223372036854775808", "99999999999999999999", "٣", "+-1", "--0"} {
		f.Add([]byte("payload"), "server-id", a, true, "original-id")
	}
	f.Add([]byte{}, "", "", false, "")
	f.Add([]byte("\xff"), "id", "1", true, "")
	f.Fuzz(func(t *testing.T, data []byte, id, attempts string, hasAttempts bool, origID string) {
		attrs := map[string]string{"custom": "kept"}
		if hasAttempts {
			attrs[AttrAttempts] = attempts
		}
		if origID != "" {
			attrs[AttrMessageID] = origID
		}
		e := messageToElement(pubsubio.Message{Data: data, ID: id, Attributes: attrs})
		if !bytes.Equal(e.Data, data) || len(e.Attributes) != len(attrs) || e.Attributes["custom"] != "kept" {
			t.Errorf("got data %q, attributes %v; want %q, %v", e.Data, e.Attributes, data, attrs)
		}
		if wantID := cmpOr(origID, id); e.MessageID != wantID {
			t.Errorf("got message ID %q, want %q", e.MessageID, wantID)
		}
		want := 0
		if hasAttempts {
			want = attemptsOracle(attempts)
		}
		if e.Attempts != want {
			t.Errorf("attempts attribute %q (present %v): got %d, want %d", attempts, hasAttempts, e.Attempts, want)
		}
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// outcomes indexes the outcomes a failure Record can have.
var outcomes = []throttle.Outcome{throttle.OutcomeClientThrottled, throttle.OutcomeServerThrottled, throttle.OutcomeError}

func fuzzRecord(errText string, outcome uint8, status int, p float64, attempts int, group string, first, last, retryAfter int64) throttle.Record {
	return throttle.Record{Error: errText, Outcome: outcomes[int(outcome)%len(outcomes)], StatusCode: status, GRPCCode: status % 17,
		Probability: p, Attempts: attempts, Group: group, FirstAttempt: first, LastAttempt: last, RetryAfter: retryAfter}
}

// FuzzFormatRecord: a failure line is always one line of valid UTF-8 JSON
// (or an error, never a panic, for a probability JSON cannot hold) that a
// reader decodes back into the Record with the original payload as input,
// the attempts of earlier runs added and the message ID.
func FuzzFormatRecord(f *testing.F) {
	f.Add([]byte(`{"id":7}`), "projects/p/messages/1", 2, "Throttled by Client. Request rejection probability: 0.31", uint8(0), 0, 0.31, 1, "3",
		int64(1767323045123456), int64(1767323046000000), int64(0))
	f.Add([]byte("\xff\xfe"), "", 0, "Server returned HTTP response code: 429", uint8(1), 429, 0.0, 3, "g", int64(1), int64(2), int64(1000))
	f.Add([]byte{}, "\xff", -1, "caller panicked: \xc3\x28", uint8(2), 0, math.Copysign(0, -1), 0, "\u2028", int64(0), int64(-1), int64(-1))
	f.Add([]byte("x"), "id", 0, "", uint8(2), 500, math.NaN(), 1, "", int64(253402300800000000), int64(math.MinInt64), int64(0))
	f.Add([]byte("line\nbreak\"}"), `"},"x":{"`, math.MaxInt, "multi\nline\terror", uint8(0), -7, math.Inf(-1), math.MaxInt, "<&>", int64(1), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, payload []byte, messageID string, prevAttempts int, errText string, outcome uint8, status int, p float64,
		attempts int, group string, first, last, retryAfter int64) {
		r := fuzzRecord(errText, outcome, status, p, attempts, group, first, last, retryAfter)
		// As the throttle makes it for an Element: its payload and ID, the
		// attempts of earlier runs added.
		r.Input, r.MessageID, r.Attempts = payload, messageID, attempts+prevAttempts
		line, err := formatRecord(r)
		if math.IsNaN(p) || math.IsInf(p, 0) {
			if err == nil {
				t.Errorf("formatRecord with probability %v = %q, want an error", p, line)
			}
			return
		}
		if err != nil {
			t.Fatalf("formatRecord(%+v): %v", r, err)
		}
		if !json.Valid([]byte(line)) || !utf8.ValidString(line) || strings.ContainsAny(line, "\n\r") {
			t.Fatalf("formatRecord(%+v) = %q: want one line of valid UTF-8 JSON", r, line)
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(line), &fields); err != nil {
			t.Fatal(err)
		}
		if got, ok := fields["message_id"]; (messageID != "") != ok || (ok && utf8.ValidString(messageID) && got != messageID) {
			t.Errorf("line %q: got message_id %v, want %q", line, got, messageID)
		}
		var back throttle.Record
		if err := back.UnmarshalJSON([]byte(line)); err != nil {
			if microsToYearOK(first) && microsToYearOK(last) {
				t.Fatalf("line %q does not decode as a Record: %v", line, err)
			}
			return // see throttle's FuzzRecordUnmarshal: years past 9999 do not parse back
		}
		if !bytes.Equal(back.Input, payload) {
			t.Errorf("line %q: got input %q, want the original payload %q", line, back.Input, payload)
		}
		if sum := attempts + prevAttempts; (sum >= attempts) == (prevAttempts >= 0) && back.Attempts != sum {
			t.Errorf("line %q: got attempts %d, want %d + %d", line, back.Attempts, attempts, prevAttempts)
		}
	})
}

func microsToYearOK(us int64) bool {
	if us == 0 {
		return true
	}
	y := time.UnixMicro(us).UTC().Year()
	return y >= 0 && y <= 9999
}

// FuzzFormatResult: a success line is always valid JSON holding the original
// payload (as text, or base64 with "input_encoding") and the response
// (embedded when it is JSON, else as text, or base64 with
// "response_encoding" when not UTF-8).
func FuzzFormatResult(f *testing.F) {
	f.Add([]byte(`{"id":7}`), "", []byte(`{"id":7}`))
	f.Add([]byte(`{"id":7}`), "msg-1", []byte(` { "pretty" : [1, 2] } `))
	f.Add([]byte("\xff\xfe"), "", []byte("plain text"))
	f.Add([]byte{}, "m", []byte{})
	f.Add([]byte("x"), "", []byte("\xff\xfe binary"))
	f.Add([]byte("x"), "", []byte(`"\u00e9"`))
	f.Add([]byte("x"), "", []byte("base64:/w=="))
	f.Add([]byte(`{"malformed":`), "", []byte(`{"malformed":`))
	f.Fuzz(func(t *testing.T, payload []byte, messageID string, response []byte) {
		line, err := formatResult(Result{Input: Element{Data: payload, MessageID: messageID}, Response: response})
		if err != nil {
			t.Fatalf("formatResult: %v", err)
		}
		if !json.Valid([]byte(line)) || strings.ContainsAny(line, "\n\r") {
			t.Fatalf("formatResult = %q: want one line of valid JSON", line)
		}
		// A JSON response is embedded as it is (compacted), raw bytes and
		// all: only a UTF-8 response makes a UTF-8 line.
		if utf8.Valid(response) && !utf8.ValidString(line) {
			t.Errorf("formatResult = %q: want valid UTF-8", line)
		}
		var j struct {
			Input            string          `json:"input"`
			Encoding         string          `json:"input_encoding"`
			Response         json.RawMessage `json:"response"`
			ResponseEncoding string          `json:"response_encoding"`
		}
		if err := json.Unmarshal([]byte(line), &j); err != nil {
			t.Fatal(err)
		}
		in := []byte(j.Input)
		if j.Encoding == "base64" {
			if in, err = base64.StdEncoding.DecodeString(j.Input); err != nil {
				t.Fatalf("line %q: input: %v", line, err)
			}
		}
		if !bytes.Equal(in, payload) {
			t.Errorf("line %q: got input %q, want %q", line, in, payload)
		}
		if json.Valid(response) {
			// As json.Marshal embeds a json.RawMessage: compact, HTML-escaped.
			var compact, want bytes.Buffer
			json.Compact(&compact, response)
			json.HTMLEscape(&want, compact.Bytes())
			if !bytes.Equal(j.Response, want.Bytes()) {
				t.Errorf("line %q: got response %s, want %s", line, j.Response, want.Bytes())
			}
			return
		}
		var s string
		if err := json.Unmarshal(j.Response, &s); err != nil {
			t.Fatalf("line %q: response is neither the JSON answer nor a string: %v", line, err)
		}
		got := []byte(s)
		if j.ResponseEncoding == "base64" {
			if got, err = base64.StdEncoding.DecodeString(s); err != nil {
				t.Fatalf("line %q: response: %v", line, err)
			}
		} else if j.ResponseEncoding != "" {
			t.Errorf("line %q: unknown response_encoding %q", line, j.ResponseEncoding)
		}
		if !bytes.Equal(got, response) {
			t.Errorf("line %q: got response %q, want %q", line, got, response)
		}
	})
}

// FuzzDeadLetterAttributes: the attributes of a dead-letter message are
// always within Pub/Sub's limits (at most 100 attributes, keys at most 256
// and values at most 1024 bytes), the error is a prefix of the record's, and
// a reprocessing run reads back the same attempts and message ID.
func FuzzDeadLetterAttributes(f *testing.F) {
	f.Add("Server returned HTTP response code: 429", uint8(1), 429, 0.0, 1, "3", int64(1767323045123456), int64(1767323046000000),
		int64(1000), "projects/p/messages/1", "beamthrottle")
	f.Add("Throttled by Client. Request rejection probability: 0.31", uint8(0), 0, 0.31, 4, "group", int64(1), int64(2), int64(0), "", "")
	f.Add(strings.Repeat("é", 700), uint8(2), 500, math.NaN(), 0, strings.Repeat("g", 2000), int64(-1), int64(0), int64(-1),
		strings.Repeat("m", 1025), strings.Repeat("€", 400))
	f.Add(strings.Repeat("x", 1023)+"€", uint8(2), -1, math.Inf(1), math.MaxInt, "", int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64),
		"id", "p")
	f.Add("", uint8(0), 0, 1e308, 0, "", int64(0), int64(0), int64(0), "", "")
	f.Fuzz(func(t *testing.T, errText string, outcome uint8, status int, p float64, attempts int, group string,
		first, last, retryAfter int64, messageID, pipeline string) {
		r := fuzzRecord(errText, outcome, status, p, attempts, group, first, last, retryAfter)
		a := deadLetterAttributes(r, messageID, pipeline, "")
		if len(a) > pubsubio.MaxAttributes {
			t.Errorf("%d attributes, limit %d", len(a), pubsubio.MaxAttributes)
		}
		for k, v := range a {
			if len(k) > pubsubio.MaxAttributeKeyBytes || len(v) > pubsubio.MaxAttributeValueBytes {
				t.Errorf("attribute %q is %d bytes long, limits %d and %d", k, len(v), pubsubio.MaxAttributeKeyBytes, pubsubio.MaxAttributeValueBytes)
			}
		}
		if !strings.HasPrefix(errText, a[AttrError]) || (len(errText) <= pubsubio.MaxAttributeValueBytes && a[AttrError] != errText) {
			t.Errorf("error attribute %q: want the record's error %.40q, cut to the limit", a[AttrError], errText)
		}
		// Values are only as valid as the texts they come from: a record
		// whose error, group, message ID or pipeline name is not UTF-8 gets
		// an attribute Pub/Sub refuses (the message then goes to the errors
		// files instead).
		if utf8.ValidString(errText) && utf8.ValidString(group) && utf8.ValidString(messageID) && utf8.ValidString(pipeline) {
			if err := pubsubio.Validate(pubsubio.Message{Data: []byte("payload"), Attributes: a}); err != nil {
				t.Errorf("attributes %v: %v", a, err)
			}
		}
		e := messageToElement(pubsubio.Message{Data: []byte("payload"), ID: "new-id", Attributes: a})
		// A pass counts one attempt at least.
		if want := max(attempts, 1); attempts >= 0 && e.Attempts != want {
			t.Errorf("attempts %d read back as %d (attribute %q), want %d", attempts, e.Attempts, a[AttrAttempts], want)
		}
		if messageID != "" && len(messageID) <= pubsubio.MaxAttributeValueBytes && e.MessageID != messageID {
			t.Errorf("message ID %q read back as %q", messageID, e.MessageID)
		}
	})
}
