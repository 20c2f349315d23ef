package throttle

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Outcome names the output an element was routed to.
type Outcome string

// The outcomes of the throttle. Success elements are emitted as the caller's
// response; the three failure outcomes are emitted as a Record.
const (
	OutcomeSuccess         Outcome = "success"
	OutcomeClientThrottled Outcome = "client_throttled"
	OutcomeServerThrottled Outcome = "server_throttled"
	OutcomeError           Outcome = "error"
)

// Message is an input element that carries its payload with metadata: the
// caller gets Data as it is (a clientcall.Caller[[]byte, []byte]), and the
// other fields pass through the transform unchanged, into the element's
// Reply on Success or its Record otherwise. Use it for payloads with an
// identity, such as Pub/Sub messages, instead of a struct of your own,
// which the transform would encode as JSON.
type Message struct {
	// Data is the payload, passed to the caller unchanged.
	Data []byte
	// MessageID identifies the message (the Pub/Sub message ID).
	MessageID string
	// AckID acknowledges the message once its output is written.
	AckID string
	// Attributes are the message's attributes.
	Attributes map[string]string
	// Attempts counts the attempts made on the payload before (by earlier
	// runs); a Record adds them to its own.
	Attempts int
}

// Reply is the Success element of Adaptive over Messages: the input and the
// caller's response.
type Reply struct {
	Input    Message
	Response []byte
}

// Record is the element type of the ClientThrottled, ServerThrottled and
// Errors outputs. It carries the original input and everything known about
// why it failed.
//
// Input holds the original element as bytes: unchanged for []byte elements,
// the UTF-8 bytes for string elements and the JSON encoding for any other
// element type (see DecodeInput); for a Message, its Data, with its
// other fields in MessageID, AckID, Attributes and Attempts.
type Record struct {
	Input        []byte
	MessageID    string            // Message.MessageID of a Message input
	AckID        string            // Message.AckID of a Message input
	Attributes   map[string]string // Message.Attributes of a Message input
	Error        string
	Outcome      Outcome
	StatusCode   int     // HTTP status when known, else 0
	GRPCCode     int     // gRPC status code when known, else 0
	Probability  float64 // client rejection probability at decision time
	Attempts     int     // how many times the element was decided on, plus Message.Attempts
	Group        string  // the throttle group (key) that handled it
	FirstAttempt int64   // unix microseconds of the first attempt
	LastAttempt  int64   // unix microseconds of the last attempt
	RetryAfter   int64   // server's Retry-After in milliseconds, 0 if none
}

// failure is why an element failed: the part of its Record that is not
// the element's own bookkeeping (payload, attempts, times).
type failure struct {
	Outcome    Outcome
	Error      string
	Status     int     // HTTP status, 0 if none
	GRPC       int     // gRPC code, 0 if none
	Prob       float64 // client rejection probability at decision time
	RetryAfter int64   // the server's Retry-After in milliseconds, 0 if none
}

// record is the one constructor of failure Records: the failure fl of
// element it in group, routed at now.
func (fl failure) record(it item, group string, now time.Time) Record {
	return Record{
		Input: it.Payload, MessageID: it.MessageID, AckID: it.AckID, Attributes: it.Attributes,
		Error: fl.Error, Outcome: fl.Outcome,
		StatusCode: fl.Status, GRPCCode: fl.GRPC, Probability: fl.Prob, Attempts: it.Attempts + it.Prior, Group: group,
		FirstAttempt: it.First, LastAttempt: now.UnixMicro(), RetryAfter: fl.RetryAfter,
	}
}

// microsToTime returns unix microseconds as a UTC time.Time (zero for 0).
func microsToTime(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// DecodeInput decodes Record.Input into v, which must be a pointer to the
// transform's input element type: *[]byte and *string receive the bytes as
// they are, *Message receives the Message (its Attempts left 0: the
// Record's Attempts include them), anything else is decoded as
// JSON.
func (r Record) DecodeInput(v any) error {
	switch p := v.(type) {
	case *Message:
		*p = Message{Data: r.Input, MessageID: r.MessageID, AckID: r.AckID, Attributes: r.Attributes}
		return nil
	case *[]byte:
		*p = append([]byte(nil), r.Input...)
		return nil
	case *string:
		*p = string(r.Input)
		return nil
	}
	if err := json.Unmarshal(r.Input, v); err != nil {
		return fmt.Errorf("throttle: decode record input as JSON: %w", err)
	}
	return nil
}

// recordJSON is the JSON form of a Record. "input" and "error" are the keys
// the original Java throttling tool wrote, kept so its consumers keep working.
type recordJSON struct {
	Input         string  `json:"input"`
	InputEncoding string  `json:"input_encoding,omitempty"`
	Error         string  `json:"error"`
	Outcome       Outcome `json:"outcome"`
	StatusCode    int     `json:"status_code,omitempty"`
	GRPCCode      int     `json:"grpc_code,omitempty"`
	Probability   float64 `json:"rejection_probability"`
	Attempts      int     `json:"attempts"`
	Group         string  `json:"group"`
	FirstAttempt  string  `json:"first_attempt,omitempty"`
	LastAttempt   string  `json:"last_attempt,omitempty"`
	RetryAfterMs  int64   `json:"retry_after_ms,omitempty"`
	MessageID     string  `json:"message_id,omitempty"`
}

// MarshalJSON writes the record as one JSON object. Input is written as a
// string when it is valid UTF-8, otherwise base64 with
// "input_encoding":"base64". Times are RFC 3339 with microseconds. Of a
// Message's metadata, only the message ID is written.
func (r Record) MarshalJSON() ([]byte, error) {
	j := recordJSON{
		Error:        r.Error,
		Outcome:      r.Outcome,
		StatusCode:   r.StatusCode,
		GRPCCode:     r.GRPCCode,
		Probability:  r.Probability,
		Attempts:     r.Attempts,
		Group:        r.Group,
		RetryAfterMs: r.RetryAfter,
		MessageID:    r.MessageID,
	}
	if utf8.Valid(r.Input) {
		j.Input = string(r.Input)
	} else {
		j.Input = base64.StdEncoding.EncodeToString(r.Input)
		j.InputEncoding = "base64"
	}
	if r.FirstAttempt != 0 {
		j.FirstAttempt = microsToTime(r.FirstAttempt).Format(time.RFC3339Nano)
	}
	if r.LastAttempt != 0 {
		j.LastAttempt = microsToTime(r.LastAttempt).Format(time.RFC3339Nano)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the form written by MarshalJSON. A record written by
// the original Java tool (only "input" and "error") is accepted too.
func (r *Record) UnmarshalJSON(b []byte) error {
	var j recordJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("throttle: decode record: %w", err)
	}
	out := Record{
		Error:       j.Error,
		Outcome:     j.Outcome,
		StatusCode:  j.StatusCode,
		GRPCCode:    j.GRPCCode,
		Probability: j.Probability,
		Attempts:    j.Attempts,
		Group:       j.Group,
		RetryAfter:  j.RetryAfterMs,
		MessageID:   j.MessageID,
	}
	switch j.InputEncoding {
	case "":
		out.Input = []byte(j.Input)
	case "base64":
		in, err := base64.StdEncoding.DecodeString(j.Input)
		if err != nil {
			return fmt.Errorf("throttle: decode record input: %w", err)
		}
		out.Input = in
	default:
		return fmt.Errorf("throttle: decode record: unknown input_encoding %q", j.InputEncoding)
	}
	for _, f := range []struct {
		s   string
		dst *int64
	}{{j.FirstAttempt, &out.FirstAttempt}, {j.LastAttempt, &out.LastAttempt}} {
		if f.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, f.s)
		if err != nil {
			return fmt.Errorf("throttle: decode record time: %w", err)
		}
		*f.dst = t.UnixMicro()
	}
	*r = out
	return nil
}

// clientThrottledMessage is the error text of a client-throttled record, as
// the original Java tool wrote it.
func clientThrottledMessage(p float64) string {
	return fmt.Sprintf("Throttled by Client. Request rejection probability: %.2f", p)
}

// serverThrottledMessage is the error text of a server-throttled record with
// an HTTP status, as the original Java tool wrote it.
func serverStatusMessage(code int) string {
	return fmt.Sprintf("Server returned HTTP response code: %d", code)
}
