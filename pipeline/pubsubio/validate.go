package pubsubio

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/proto"
)

// Limits of the Pub/Sub service (https://cloud.google.com/pubsub/quotas#resource_limits).
const (
	// MaxMessageBytes is the largest publish request Pub/Sub accepts,
	// 10,000,000 bytes. One message is published in a request together with
	// the topic name, so the encoded message (data, attribute keys and values
	// and their protobuf framing, see [EncodedSize]) must stay below this by
	// [RequestOverheadBytes]. This is the rule the Go client library enforces
	// (pubsub.MaxPublishRequestBytes) and Beam Java's PubsubIO uses.
	MaxMessageBytes = 10_000_000
	// RequestOverheadBytes is what a publish request needs besides one
	// message when the topic name has the longest legal length:
	// "projects/" + 30-character project + "/topics/" + 255-character topic,
	// with its field header, plus 5 bytes for the repeated-message header.
	RequestOverheadBytes = 310
	// MaxAttributes is the number of attributes a message may carry.
	MaxAttributes = 100
	// MaxAttributeKeyBytes is the longest attribute key, in bytes.
	MaxAttributeKeyBytes = 256
	// MaxAttributeValueBytes is the longest attribute value, in bytes.
	MaxAttributeValueBytes = 1024
)

// Errors reported by [Validate]. Each is wrapped with detail; test with
// errors.Is.
var (
	// ErrEmpty: the message has neither data nor attributes.
	ErrEmpty = errors.New("pubsubio: message has no data and no attributes")
	// ErrTooLarge: the encoded message exceeds MaxMessageBytes-RequestOverheadBytes.
	ErrTooLarge = errors.New("pubsubio: message too large")
	// ErrTooManyAttributes: more than MaxAttributes attributes.
	ErrTooManyAttributes = errors.New("pubsubio: too many attributes")
	// ErrAttributeTooLong: a key longer than MaxAttributeKeyBytes or a value
	// longer than MaxAttributeValueBytes.
	ErrAttributeTooLong = errors.New("pubsubio: attribute too long")
	// ErrAttributeNotUTF8: a key or value is not valid UTF-8; protobuf cannot
	// encode it, so the client library would fail the whole publish call.
	ErrAttributeNotUTF8 = errors.New("pubsubio: attribute is not valid UTF-8")
)

// Validate reports why Pub/Sub would never accept m (nil if it would). The
// error wraps one of ErrEmpty, ErrTooLarge, ErrTooManyAttributes,
// ErrAttributeTooLong or ErrAttributeNotUTF8. ID, PublishTime and AckID are
// ignored.
func Validate(m Message) error {
	if len(m.Data) == 0 && len(m.Attributes) == 0 {
		return ErrEmpty
	}
	if n := len(m.Attributes); n > MaxAttributes {
		return fmt.Errorf("%w: %d attributes, limit %d", ErrTooManyAttributes, n, MaxAttributes)
	}
	for k, v := range m.Attributes {
		if len(k) > MaxAttributeKeyBytes {
			return fmt.Errorf("%w: key %.32q... is %d bytes, limit %d", ErrAttributeTooLong, k, len(k), MaxAttributeKeyBytes)
		}
		if len(v) > MaxAttributeValueBytes {
			return fmt.Errorf("%w: value of key %q is %d bytes, limit %d", ErrAttributeTooLong, k, len(v), MaxAttributeValueBytes)
		}
		if !utf8.ValidString(k) {
			return fmt.Errorf("%w: key %q", ErrAttributeNotUTF8, k)
		}
		if !utf8.ValidString(v) {
			return fmt.Errorf("%w: value of key %q", ErrAttributeNotUTF8, k)
		}
	}
	if n, limit := EncodedSize(m), MaxMessageBytes-RequestOverheadBytes; n > limit {
		return fmt.Errorf("%w: %d encoded bytes (%d of data, %d attributes), limit %d", ErrTooLarge, n, len(m.Data), len(m.Attributes), limit)
	}
	return nil
}

// EncodedSize is the size in bytes of m's data and attributes as a
// google.pubsub.v1.PubsubMessage on the wire, the size Pub/Sub limits.
func EncodedSize(m Message) int {
	return proto.Size(&pubsubpb.PubsubMessage{Data: m.Data, Attributes: m.Attributes})
}
