package pubsubio_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function1x1(format)
	register.Function2x0(ackedEarly)
	register.Function1x1(crash)
}

// format renders a message's data and attributes, the part a round trip
// must keep, as one comparable string.
func format(m pubsubio.Message) string {
	var b strings.Builder
	b.Write(m.Data)
	for _, k := range slices.Sorted(maps.Keys(m.Attributes)) {
		fmt.Fprintf(&b, "|%s=%s", k, m.Attributes[k])
	}
	return b.String()
}

// testMessages returns n distinct messages with attributes, their data
// starting with prefix.
func testMessages(prefix string, n int) []pubsubio.Message {
	msgs := make([]pubsubio.Message, n)
	for i := range msgs {
		msgs[i] = pubsubio.Message{
			Data:       fmt.Appendf(nil, "%s-%05d", prefix, i),
			Attributes: map[string]string{"index": fmt.Sprint(i), "parity": fmt.Sprint(i % 2)},
		}
	}
	return msgs
}

// formatted returns format of each message.
func formatted(msgs []pubsubio.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = format(m)
	}
	return out
}

// anys converts a slice for passert.
func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// publish puts msgs on topic through the fake's back door.
func publish(srv *pstest.Server, topic string, msgs []pubsubio.Message) {
	for _, m := range msgs {
		srv.Publish("projects/"+project+"/topics/"+topic, m.Data, m.Attributes)
	}
}

func TestReadDrainsAndAcks(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	msgs := testMessages("drain", 2000)
	publish(srv, topic, msgs)

	p, s := beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{
		Project: project, Subscription: sub, Endpoint: srv.Addr, IdleTimeout: time.Second,
	})
	passert.Equals(s, beam.ParDo(s, format, read), anys(formatted(msgs))...)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}

	for _, m := range srv.Messages() {
		if m.Acks != 1 {
			t.Errorf("message %s: got %d acks, want 1", m.ID, m.Acks)
		}
	}
	left, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("got %d messages left on the subscription after the read, want 0", len(left))
	}
}

// handoffServer is the fake that ackedEarly inspects.
var handoffServer atomic.Pointer[pstest.Server]

// ackedEarly emits the ID of m if the fake has already seen an ack for it
// while the bundle that emitted it is still running.
func ackedEarly(m pubsubio.Message, emit func(string)) {
	if handoffServer.Load().Message(m.ID).Acks > 0 {
		emit(m.ID)
	}
}

func TestReadAcksOnlyAfterBundleCommits(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	handoffServer.Store(srv)
	msgs := testMessages("handoff", 300)
	publish(srv, topic, msgs)

	p, s := beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{
		Project: project, Subscription: sub, Endpoint: srv.Addr, IdleTimeout: time.Second,
		MaxMessages: 50, // Several rounds.
	})
	// ackedEarly runs fused with Read, inside the bundle that emitted the
	// message, before the runner commits it.
	passert.Empty(s, beam.ParDo(s, ackedEarly, read))
	passert.Count(s, read, "read", len(msgs))
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}
	for _, m := range srv.Messages() {
		if m.Acks != 1 {
			t.Errorf("message %s: got %d acks after the pipeline, want 1", m.ID, m.Acks)
		}
	}
}

// errCrash is the failure crash simulates.
var errCrash = errors.New("simulated worker crash")

// crash fails every bundle, like a worker dying after Read emitted its
// messages and before the runner committed them.
func crash(pubsubio.Message) error {
	return errCrash
}

func TestReadRedeliversWhenJobDies(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	var skew atomic.Int64 // The fake's clock runs ahead of the wall clock by this.
	srv.SetTimeNowFunc(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	msgs := testMessages("crash", 100)
	publish(srv, topic, msgs)

	p, s := beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{
		Project: project, Subscription: sub, Endpoint: srv.Addr, IdleTimeout: time.Second,
	})
	beam.ParDo0(s, crash, read)
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), errCrash.Error()) {
		t.Fatalf("got pipeline error %v, want one containing %q", err, errCrash)
	}
	delivered := 0
	for _, m := range srv.Messages() {
		if m.Acks != 0 {
			t.Errorf("message %s: got %d acks after the job died, want 0", m.ID, m.Acks)
		}
		if m.Deliveries > 0 {
			delivered++
		}
	}
	if delivered == 0 {
		t.Fatal("no message was delivered to the job before it died; the test proves nothing")
	}

	// Once the leases Read took lapse, Pub/Sub delivers every message again.
	skew.Store(int64(pubsubio.DefaultAckDeadline + time.Minute))
	got, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sorted(formatted(msgs)), sorted(formatted(got))); diff != "" {
		t.Errorf("messages redelivered after the job died (-want +got):\n%s", diff)
	}
}

// sorted returns xs sorted.
func sorted(xs []string) []string {
	return slices.Sorted(slices.Values(xs))
}

func TestReadPublishUseEmulatorHostVariable(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	// Prism runs the SDK worker in this process, so the workers see it.
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	msgs := testMessages("env", 20)

	p, s := beam.NewPipelineWithRoot()
	rejected := pubsubio.Publish(s, pubsubio.PublishConfig{Project: project, Topic: topic}, beam.CreateList(s, msgs))
	passert.Empty(s, rejected)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("publish pipeline failed: %v", err)
	}

	p, s = beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{Project: project, Subscription: sub, IdleTimeout: 500 * time.Millisecond})
	passert.Equals(s, beam.ParDo(s, format, read), anys(formatted(msgs))...)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("read pipeline failed: %v", err)
	}
}

func TestReadMissingSubscriptionFails(t *testing.T) {
	srv, _, _ := newEmulator(t)
	p, s := beam.NewPipelineWithRoot()
	pubsubio.Read(s, pubsubio.ReadConfig{Project: project, Subscription: "missing", Endpoint: srv.Addr, IdleTimeout: time.Second})
	err := ptest.Run(p)
	for _, want := range []string{"pubsubio.Read", "projects/" + project + "/subscriptions/missing", "NotFound"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got pipeline error %v, want one containing %q", err, want)
		}
	}
}

func TestTryReadConfig(t *testing.T) {
	ok := pubsubio.ReadConfig{Project: project, Subscription: "sub"}
	tests := []struct {
		name    string
		edit    func(*pubsubio.ReadConfig)
		wantErr string
	}{
		{"valid", func(*pubsubio.ReadConfig) {}, ""},
		{"no project", func(c *pubsubio.ReadConfig) { c.Project = "" }, "Project"},
		{"no subscription", func(c *pubsubio.ReadConfig) { c.Subscription = "" }, "Subscription"},
		{"negative max messages", func(c *pubsubio.ReadConfig) { c.MaxMessages = -1 }, "MaxMessages"},
		{"negative idle timeout", func(c *pubsubio.ReadConfig) { c.IdleTimeout = -time.Second }, "IdleTimeout"},
		{"ack deadline too short", func(c *pubsubio.ReadConfig) { c.AckDeadline = time.Second }, "AckDeadline"},
		{"ack deadline too long", func(c *pubsubio.ReadConfig) { c.AckDeadline = 11 * time.Minute }, "AckDeadline"},
		{"negative max extension", func(c *pubsubio.ReadConfig) { c.MaxExtension = -1 }, "MaxExtension"},
		{"negative poll timeout", func(c *pubsubio.ReadConfig) { c.PollTimeout = -1 }, "PollTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, s := beam.NewPipelineWithRoot()
			_, err := pubsubio.TryRead(s, cfg)
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
