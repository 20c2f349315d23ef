package pubsubio_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function1x1(buildMessage)
	register.Function1x1(describeRejected)
}

func TestPublishRoundTrip(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	msgs := testMessages("roundtrip", 1000)

	p, s := beam.NewPipelineWithRoot()
	rejected := pubsubio.Publish(s, pubsubio.PublishConfig{Project: project, Topic: topic, Endpoint: srv.Addr}, beam.CreateList(s, msgs))
	passert.Empty(s, rejected)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}

	got, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[string]map[string]string, len(msgs))
	for _, m := range msgs {
		want[string(m.Data)] = m.Attributes
	}
	gotByData := make(map[string]map[string]string, len(got))
	for _, m := range got {
		if _, dup := gotByData[string(m.Data)]; dup {
			t.Errorf("message %q published twice", m.Data)
		}
		gotByData[string(m.Data)] = m.Attributes
		if m.ID == "" || m.PublishTime == 0 {
			t.Errorf("message %q: got ID %q and publish time %d, want both set", m.Data, m.ID, m.PublishTime)
		}
	}
	if diff := cmp.Diff(want, gotByData); diff != "" {
		t.Errorf("published messages, by data (-want +got):\n%s", diff)
	}
}

func TestPublishFailureFailsPipeline(t *testing.T) {
	tests := []struct {
		name  string
		topic string
		stop  bool // Stop the server before the run.
		want  []string
	}{
		{
			name:  "topic missing",
			topic: "missing",
			want:  []string{"pubsubio.Publish: 20 of 20 messages not published to projects/" + project + "/topics/missing", "NotFound"},
		},
		{
			name:  "server stopped",
			topic: "topic",
			stop:  true,
			want:  []string{"pubsubio.Publish: 20 of 20 messages not published to projects/" + project + "/topics/topic", "emulator 127.0.0.1:", "no confirmation within the 2s publish timeout"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var addr string
			if tt.stop {
				addr = stoppedEmulator(t)
			} else {
				srv, _, _ := newEmulator(t)
				addr = srv.Addr
			}
			p, s := beam.NewPipelineWithRoot()
			cfg := pubsubio.PublishConfig{Project: project, Topic: tt.topic, Endpoint: addr, Timeout: 2 * time.Second}
			pubsubio.Publish(s, cfg, beam.CreateList(s, testMessages("fail", 20)))
			err := ptest.Run(p)
			if err == nil {
				t.Fatal("pipeline succeeded, want it to fail")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("got pipeline error %v\nwant one containing %q", err, want)
				}
			}
		})
	}
}

// messageSpec describes a message for buildMessage to make on the worker, so
// that large messages need not be embedded in the pipeline.
type messageSpec struct {
	Name       string
	DataBytes  int
	Attributes int
	KeyBytes   int // Length of the first attribute's key, if positive.
	ValueBytes int // Length of the first attribute's value, if positive.
	BadUTF8    bool
}

// buildMessage makes the message spec describes; its data starts with the
// spec's name.
func buildMessage(spec messageSpec) pubsubio.Message {
	data := []byte(spec.Name)
	if spec.DataBytes > len(data) {
		data = append(data, make([]byte, spec.DataBytes-len(data))...)
	}
	m := pubsubio.Message{Data: data}
	if spec.DataBytes == 0 && spec.Attributes == 0 {
		m.Data = nil
	}
	if spec.Attributes > 0 {
		m.Attributes = make(map[string]string, spec.Attributes)
		for i := range spec.Attributes {
			m.Attributes[fmt.Sprintf("k%03d", i)] = "v"
		}
		if spec.KeyBytes > 0 {
			delete(m.Attributes, "k000")
			m.Attributes[strings.Repeat("k", spec.KeyBytes)] = "v"
		}
		if spec.ValueBytes > 0 {
			m.Attributes["k000"] = strings.Repeat("v", spec.ValueBytes)
		}
		if spec.BadUTF8 {
			m.Attributes["k000"] = "\xff"
		}
	}
	return m
}

// describeRejected names which sentinel error a rejection carries and the
// size of the message it kept.
func describeRejected(r pubsubio.Rejected) string {
	kind := "unknown: " + r.Reason
	for _, err := range []error{pubsubio.ErrEmpty, pubsubio.ErrTooLarge, pubsubio.ErrTooManyAttributes, pubsubio.ErrAttributeTooLong, pubsubio.ErrAttributeNotUTF8} {
		if strings.HasPrefix(r.Reason, err.Error()) {
			kind = err.Error()
		}
	}
	return fmt.Sprintf("%s data=%d attributes=%d", kind, len(r.Message.Data), len(r.Message.Attributes))
}

func TestPublishRejectsWhatPubSubWouldRefuse(t *testing.T) {
	srv, topic, _ := newEmulator(t)
	const tooLarge = pubsubio.MaxMessageBytes // Data alone is over the limit.
	specs := []messageSpec{
		{Name: "valid-small", DataBytes: 100, Attributes: 3},
		{Name: "valid-max-attributes", DataBytes: 32, Attributes: pubsubio.MaxAttributes},
		{Name: "valid-long-key", DataBytes: 32, Attributes: 1, KeyBytes: pubsubio.MaxAttributeKeyBytes},
		{Name: "empty"},
		{Name: "too-large", DataBytes: tooLarge},
		{Name: "too-many-attributes", DataBytes: 32, Attributes: pubsubio.MaxAttributes + 1},
		{Name: "key-too-long", DataBytes: 32, Attributes: 1, KeyBytes: pubsubio.MaxAttributeKeyBytes + 1},
		{Name: "value-too-long", DataBytes: 32, Attributes: 1, ValueBytes: pubsubio.MaxAttributeValueBytes + 1},
		{Name: "bad-utf8", DataBytes: 32, Attributes: 1, BadUTF8: true},
	}

	p, s := beam.NewPipelineWithRoot()
	msgs := beam.ParDo(s, buildMessage, beam.CreateList(s, specs))
	rejected := pubsubio.Publish(s, pubsubio.PublishConfig{Project: project, Topic: topic, Endpoint: srv.Addr}, msgs)
	passert.Equals(s, beam.ParDo(s, describeRejected, rejected),
		pubsubio.ErrEmpty.Error()+" data=0 attributes=0",
		fmt.Sprintf("%s data=%d attributes=0", pubsubio.ErrTooLarge, tooLarge),
		fmt.Sprintf("%s data=32 attributes=%d", pubsubio.ErrTooManyAttributes, pubsubio.MaxAttributes+1),
		pubsubio.ErrAttributeTooLong.Error()+" data=32 attributes=1",
		pubsubio.ErrAttributeTooLong.Error()+" data=32 attributes=1",
		pubsubio.ErrAttributeNotUTF8.Error()+" data=32 attributes=1",
	)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}

	var published []string
	for _, m := range srv.Messages() {
		published = append(published, strings.TrimRight(string(m.Data), "\x00"))
	}
	if diff := cmp.Diff([]string{"valid-long-key", "valid-max-attributes", "valid-small"}, sorted(published)); diff != "" {
		t.Errorf("published messages (-want +got):\n%s", diff)
	}
}

func TestTryPublishConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     pubsubio.PublishConfig
		wantErr string
	}{
		{"valid", pubsubio.PublishConfig{Project: project, Topic: "t"}, ""},
		{"no project", pubsubio.PublishConfig{Topic: "t"}, "Project"},
		{"no topic", pubsubio.PublishConfig{Project: project}, "Topic"},
		{"negative timeout", pubsubio.PublishConfig{Project: project, Topic: "t", Timeout: -1}, "Timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := pubsubio.TryPublish(s, tt.cfg, beam.Create(s, pubsubio.Message{Data: []byte("x")}))
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("got error %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestTryPublishRejectsOtherElementTypes(t *testing.T) {
	_, s := beam.NewPipelineWithRoot()
	_, err := pubsubio.TryPublish(s, pubsubio.PublishConfig{Project: project, Topic: "t"}, beam.Create(s, "not a message"))
	if err == nil {
		t.Error("got nil error for a PCollection<string>, want one")
	}
}
