package pipeline

import (
	"encoding/json"
	"reflect"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	register.Function1x2[Result, string, error](formatResult)
	register.Function1x2[throttle.Record, string, error](formatRecord)
	register.Emitter1[string]()
	register.Emitter1[Line]()
	beam.RegisterType(reflect.TypeOf((*Line)(nil)).Elem())
}

// Line is one formatted output line and the Pub/Sub ack ID of the message
// it came from ("" when the input did not come from a subscription).
type Line struct {
	Text  string
	AckID string
}

// resultLine formats a Success element as a Line.
func resultLine(r Result) (Line, error) {
	text, err := formatResult(r)
	return Line{Text: text, AckID: r.Input.AckID}, err
}

// failureLine formats a failure Record as a Line.
func failureLine(r throttle.Record) (Line, error) {
	text, err := formatRecord(r)
	return Line{Text: text, AckID: r.AckID}, err
}

// Output names, used for file names, metrics and the summary.
const (
	OutSuccess         = "success"
	OutClientThrottled = "client_throttled"
	OutServerThrottled = "server_throttled"
	OutErrors          = "errors"
	OutParked          = "parked"
)

// resultJSON is a Success line.
type resultJSON struct {
	Input            string          `json:"input"`
	Encoding         string          `json:"input_encoding,omitempty"`
	Response         json.RawMessage `json:"response"`
	ResponseEncoding string          `json:"response_encoding,omitempty"`
	MessageID        string          `json:"message_id,omitempty"`
}

// formatResult renders a Success element as one JSON line: the input as a
// string, and the response embedded as JSON when it is UTF-8 JSON, else as
// a string. A string that is not UTF-8 is written base64 and says so, in
// "input_encoding":"base64" or "response_encoding":"base64", as failure
// records do; without that key a string is the bytes themselves.
func formatResult(r Result) (string, error) {
	j := resultJSON{MessageID: r.Input.MessageID}
	j.Input, j.Encoding = textOrBase64(r.Input.Data)
	if json.Valid(r.Response) && utf8.Valid(r.Response) {
		j.Response = r.Response
	} else {
		var s string
		s, j.ResponseEncoding = textOrBase64(r.Response)
		b, err := json.Marshal(s)
		if err != nil {
			return "", err
		}
		j.Response = b
	}
	b, err := json.Marshal(j)
	return string(b), err
}

// formatRecord renders a failure Record of the pipeline as one JSON line in
// the Record's JSON form (keys "input" and "error" as the original Java
// tool), with the original payload as input, attempts counting those of
// earlier runs, and the Pub/Sub message ID when there is one.
func formatRecord(r throttle.Record) (string, error) {
	b, err := json.Marshal(r)
	return string(b), err
}

// errorRecord is the errors Record of an element the pipeline refuses
// before the throttle, for the reason msg.
func errorRecord(e Element, msg string) throttle.Record {
	return throttle.Record{Input: e.Data, MessageID: e.MessageID, AckID: e.AckID, Attributes: e.Attributes,
		Attempts: max(e.Attempts, 0), Error: msg, Outcome: throttle.OutcomeError}
}

func textOrBase64(b []byte) (string, string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return encodeBase64(b), "base64"
}

// outputOf names the output of a failure outcome.
func outputOf(o throttle.Outcome) string {
	switch o {
	case throttle.OutcomeClientThrottled:
		return OutClientThrottled
	case throttle.OutcomeServerThrottled:
		return OutServerThrottled
	}
	return OutErrors
}
