// Package pubsubio reads from and writes to Google Cloud Pub/Sub in Beam Go
// pipelines on every runner (Prism, Dataflow, ...).
//
// Beam Go's own pubsubio is implemented natively by Dataflow only, so this
// package calls the Pub/Sub client library (cloud.google.com/go/pubsub/v2)
// from inside DoFns instead:
//
//   - [Publish] writes a PCollection<[Message]> to a topic and returns the
//     messages Pub/Sub would never accept (too large, too many attributes, ...)
//     as a PCollection<[Rejected]>.
//   - [Read] emits a PCollection<[Message]> from a subscription with unary
//     Pull, acknowledging each message only after the runner has committed
//     the bundle that emitted it. It runs forever (streaming) or, with
//     [ReadConfig.IdleTimeout], until the subscription has been quiet for a
//     while (draining a dead-letter backlog in batch).
//   - End-to-end acknowledgement: with [ReadConfig.ManualAck], Read does not
//     acknowledge at all; it emits each message with its [Message.AckID] and
//     keeps it leased, and the pipeline passes the ack ID to [Ack] once the
//     message's outputs are durably written. [PublishAcked] is such a sink:
//     it emits the ack IDs of the messages Pub/Sub confirmed.
//
// Both honour PUBSUB_EMULATOR_HOST, or an explicit Endpoint, so they run
// against the emulator in cmd/pubsub-emulator or an in-process pstest server.
//
// Delivery is at least once in both directions: a retried Publish bundle
// publishes its messages again, and a Read message whose acknowledgement did
// not reach Pub/Sub is delivered again. Consumers must tolerate duplicates.
package pubsubio

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*Message)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Rejected)(nil)).Elem())
}

// Message is one Pub/Sub message as a Beam element. It is schema-coded: all
// fields are exported plain values.
type Message struct {
	// Data is the payload.
	Data []byte
	// Attributes are the message's key/value attributes; nil and empty are
	// equivalent.
	Attributes map[string]string
	// ID is the message ID the server assigned. It is set by Read and ignored
	// by Publish.
	ID string
	// PublishTime is when the server received the message, in Unix
	// microseconds. It is set by Read and ignored by Publish.
	PublishTime int64
	// AckID is set by Read in ManualAck mode (empty otherwise): pass it to
	// [Ack] once the message's outputs are durable. Publish does not send it;
	// [PublishAcked] emits it once the message is published.
	AckID string
}

// Rejected is a message that Publish did not send because Pub/Sub can never
// accept it (see [Validate]), with the reason.
type Rejected struct {
	// Message is the original message, unchanged.
	Message Message
	// Reason is the validation error's text, starting with "pubsubio: ".
	Reason string
}
