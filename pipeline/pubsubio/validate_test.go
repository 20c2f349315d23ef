package pubsubio_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// maxDataOnly is the data size of the largest message without attributes:
// its encoding adds a tag byte and a 4-byte length.
const maxDataOnly = pubsubio.MaxMessageBytes - pubsubio.RequestOverheadBytes - 5

// attributes returns n attributes with distinct short keys.
func attributes(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("key%03d", i)] = "v"
	}
	return m
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		m    pubsubio.Message
		want error
	}{
		{"data only", pubsubio.Message{Data: []byte("x")}, nil},
		{"attributes only", pubsubio.Message{Attributes: map[string]string{"k": "v"}}, nil},
		{"empty", pubsubio.Message{}, pubsubio.ErrEmpty},
		{"empty attributes", pubsubio.Message{Attributes: map[string]string{}}, pubsubio.ErrEmpty},
		{"ID and publish time are ignored", pubsubio.Message{ID: "m1", PublishTime: 5}, pubsubio.ErrEmpty},
		{"max attributes", pubsubio.Message{Attributes: attributes(pubsubio.MaxAttributes)}, nil},
		{"too many attributes", pubsubio.Message{Attributes: attributes(pubsubio.MaxAttributes + 1)}, pubsubio.ErrTooManyAttributes},
		{"max key", pubsubio.Message{Attributes: map[string]string{strings.Repeat("k", pubsubio.MaxAttributeKeyBytes): "v"}}, nil},
		{"key too long", pubsubio.Message{Attributes: map[string]string{strings.Repeat("k", pubsubio.MaxAttributeKeyBytes+1): "v"}}, pubsubio.ErrAttributeTooLong},
		{"key limit is bytes", pubsubio.Message{Attributes: map[string]string{strings.Repeat("é", pubsubio.MaxAttributeKeyBytes/2+1): "v"}}, pubsubio.ErrAttributeTooLong},
		{"max value", pubsubio.Message{Attributes: map[string]string{"k": strings.Repeat("v", pubsubio.MaxAttributeValueBytes)}}, nil},
		{"value too long", pubsubio.Message{Attributes: map[string]string{"k": strings.Repeat("v", pubsubio.MaxAttributeValueBytes+1)}}, pubsubio.ErrAttributeTooLong},
		{"key not UTF-8", pubsubio.Message{Attributes: map[string]string{"k\xff": "v"}}, pubsubio.ErrAttributeNotUTF8},
		{"value not UTF-8", pubsubio.Message{Attributes: map[string]string{"k": "\xc3("}}, pubsubio.ErrAttributeNotUTF8},
		{"largest message", pubsubio.Message{Data: make([]byte, maxDataOnly)}, nil},
		{"one byte too large", pubsubio.Message{Data: make([]byte, maxDataOnly+1)}, pubsubio.ErrTooLarge},
		{"attributes count towards size", pubsubio.Message{Data: make([]byte, maxDataOnly), Attributes: map[string]string{"k": "v"}}, pubsubio.ErrTooLarge},
		{"data over 10 MB", pubsubio.Message{Data: make([]byte, 10<<20)}, pubsubio.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pubsubio.Validate(tt.m)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "pubsubio: ") {
				t.Errorf("got error %q, want it prefixed with the package name", err)
			}
		})
	}
}

func TestEncodedSize(t *testing.T) {
	tests := []struct {
		name string
		m    pubsubio.Message
		want int
	}{
		{"empty", pubsubio.Message{}, 0},
		{"data", pubsubio.Message{Data: []byte("hello")}, 1 + 1 + 5},
		{"largest message", pubsubio.Message{Data: make([]byte, maxDataOnly)}, pubsubio.MaxMessageBytes - pubsubio.RequestOverheadBytes},
		// A map entry: tag, length, then key and value fields, each a tag,
		// a length and the bytes.
		{"attribute", pubsubio.Message{Attributes: map[string]string{"ab": "cde"}}, 1 + 1 + (1 + 1 + 2) + (1 + 1 + 3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pubsubio.EncodedSize(tt.m); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestValidateAgreesWithClientLibrary checks the size limit against the
// limit the Go client library enforces for a topic with the longest legal
// name: the largest valid message gets past it, one byte more does not.
func TestValidateAgreesWithClientLibrary(t *testing.T) {
	srv, _, _ := newEmulator(t)
	ctx := context.Background()
	longProject := strings.Repeat("p", 30)
	c, err := pubsub.NewClient(ctx, longProject,
		option.WithEndpoint(srv.Addr),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.Publisher(strings.Repeat("t", 255))
	p.PublishSettings.Timeout = time.Second // The fake refuses the large message; do not retry for long.
	defer p.Stop()

	tooLarge := pubsubio.Message{Data: make([]byte, maxDataOnly+1)}
	if err := pubsubio.Validate(tooLarge); !errors.Is(err, pubsubio.ErrTooLarge) {
		t.Fatalf("Validate: got %v, want ErrTooLarge", err)
	}
	if _, err := p.Publish(ctx, &pubsub.Message{Data: tooLarge.Data}).Get(ctx); !errors.Is(err, pubsub.ErrOversizedMessage) {
		t.Errorf("client library on a message Validate refuses: got %v, want ErrOversizedMessage", err)
	}

	largest := pubsubio.Message{Data: make([]byte, maxDataOnly)}
	if err := pubsubio.Validate(largest); err != nil {
		t.Fatalf("Validate: got %v, want nil", err)
	}
	// The fake refuses the topic (and gRPC messages over 4 MiB), but the
	// client library must not refuse the message itself.
	if _, err := p.Publish(ctx, &pubsub.Message{Data: largest.Data}).Get(ctx); errors.Is(err, pubsub.ErrOversizedMessage) {
		t.Errorf("client library on a message Validate accepts: got %v, want any other outcome", err)
	}
}

func BenchmarkValidate(b *testing.B) {
	m := pubsubio.Message{Data: make([]byte, 4096), Attributes: attributes(20)}
	b.ReportAllocs()
	for b.Loop() {
		if err := pubsubio.Validate(m); err != nil {
			b.Fatal(err)
		}
	}
}
