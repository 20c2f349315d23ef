package pubsubio_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.Function1x1(ackIDOf)
	register.Function2x0(missingAckID)
	register.Function1x1(rejectedAckID)
	register.Function1x1(poisonEveryFifth)
	register.Function1x2(stampEventTime)
	register.Function1x1(blank)
	register.DoFn1x0[string](&collectFn{})
}

// outTopic is the topic the PublishAcked tests write to, with subscription
// outTopic+"-sub".
const outTopic = "out"

// newOutTopic creates outTopic and its subscription on srv.
func newOutTopic(t *testing.T, srv *pstest.Server) {
	t.Helper()
	ctx := context.Background()
	if err := pubsubadmin.CreateTopic(ctx, project, outTopic, srv.Addr); err != nil {
		t.Fatal(err)
	}
	if err := pubsubadmin.CreateSubscription(ctx, project, outTopic, outTopic+"-sub", srv.Addr); err != nil {
		t.Fatal(err)
	}
}

// ackIDOf returns the message's ack ID.
func ackIDOf(m pubsubio.Message) string { return m.AckID }

// missingAckID emits the ID of a message read without its ack ID.
func missingAckID(m pubsubio.Message, emit func(string)) {
	if m.AckID == "" {
		emit(m.ID)
	}
}

// blank reports whether s is empty.
func blank(s string) bool { return s == "" }

// rejectedAckID returns the ack ID a rejected message kept.
func rejectedAckID(r pubsubio.Rejected) string { return r.Message.AckID }

// poisonEveryFifth gives every fifth test message (by its "index"
// attribute) more attributes than Pub/Sub accepts, so Publish rejects it.
func poisonEveryFifth(m pubsubio.Message) pubsubio.Message {
	var i int
	fmt.Sscan(m.Attributes["index"], &i)
	if i%5 != 0 {
		return m
	}
	attrs := make(map[string]string, pubsubio.MaxAttributes+1)
	for j := range pubsubio.MaxAttributes + 1 {
		attrs[fmt.Sprintf("k%03d", j)] = "v"
	}
	m.Attributes = attrs
	return m
}

// stampEventTime gives m the event time in its "ts" attribute (Unix
// seconds), for windowing.
func stampEventTime(m pubsubio.Message) (beam.EventTime, pubsubio.Message) {
	var sec int64
	fmt.Sscan(m.Attributes["ts"], &sec)
	return beam.EventTime(sec * 1000), m
}

// collected holds what collectFn saw, by key.
var collected sync.Map // string → *collection

// collection is a concurrency-safe list of strings.
type collection struct {
	mu    sync.Mutex
	items []string
}

func (c *collection) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items = append(c.items, s)
}

func (c *collection) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.items...)
}

// newCollection registers an empty collection under key.
func newCollection(key string) *collection {
	c := &collection{}
	collected.Store(key, c)
	return c
}

// collectFn appends every element to the collection registered under Key.
type collectFn struct {
	Key string
}

func (f *collectFn) ProcessElement(s string) {
	c, _ := collected.Load(f.Key)
	c.(*collection).add(s)
}

// countAcks returns how many of srv's messages on topic have been
// acknowledged (at least once) and how many not.
func countAcks(srv *pstest.Server, topic string) (acked, unacked int) {
	for _, m := range srv.Messages() {
		if m.Topic != "projects/"+project+"/topics/"+topic {
			continue
		}
		if m.Acks > 0 {
			acked++
		} else {
			unacked++
		}
	}
	return acked, unacked
}

func TestManualAckReadThenAck(t *testing.T) {
	tests := []struct {
		name      string
		reshuffle bool // Ack in another stage than Read, so another bundle.
	}{
		{"ack fused with read", false},
		{"ack after a fusion break", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, topic, sub := newEmulator(t)
			msgs := testMessages("manual", 500)
			publish(srv, topic, msgs)

			p, s := beam.NewPipelineWithRoot()
			read := pubsubio.Read(s, pubsubio.ReadConfig{
				Project: project, Subscription: sub, Endpoint: srv.Addr,
				IdleTimeout: 500 * time.Millisecond, MaxMessages: 100, ManualAck: true,
			})
			passert.Equals(s, beam.ParDo(s, format, read), anys(formatted(msgs))...)
			passert.Empty(s, beam.ParDo(s, missingAckID, read))
			ids := beam.ParDo(s, ackIDOf, read)
			if tt.reshuffle {
				ids = beam.Reshuffle(s, ids)
			}
			pubsubio.Ack(s, pubsubio.AckConfig{Project: project, Subscription: sub, Endpoint: srv.Addr}, ids)
			if err := ptest.Run(p); err != nil {
				t.Fatalf("pipeline failed: %v", err)
			}

			for _, m := range srv.Messages() {
				if m.Acks != 1 || m.Deliveries != 1 {
					t.Errorf("message %s: got %d acks and %d deliveries, want 1 and 1", m.ID, m.Acks, m.Deliveries)
				}
			}
			if got := pubsubio.OutstandingLeases(project, sub, srv.Addr); got != 0 {
				t.Errorf("got %d leases still extended after every message was acknowledged, want 0", got)
			}
			left, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("got %d messages left on the subscription, want 0", len(left))
			}
		})
	}
}

func TestManualAckWithoutAckRedelivers(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	var skew atomic.Int64 // The fake's clock runs ahead of the wall clock by this.
	srv.SetTimeNowFunc(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	msgs := testMessages("unacked", 200)
	publish(srv, topic, msgs)

	p, s := beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{
		Project: project, Subscription: sub, Endpoint: srv.Addr,
		IdleTimeout: 500 * time.Millisecond, MaxMessages: 50, ManualAck: true,
	})
	passert.Count(s, read, "read", len(msgs))
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}

	for _, m := range srv.Messages() {
		if m.Acks != 0 || m.Deliveries != 1 {
			t.Errorf("message %s: got %d acks and %d deliveries, want 0 and 1", m.ID, m.Acks, m.Deliveries)
		}
		if len(m.Modacks) == 0 || m.Modacks[0].AckDeadline != int32(pubsubio.DefaultAckDeadline/time.Second) {
			t.Errorf("message %s: got modacks %+v, want a lease of %v", m.ID, m.Modacks, pubsubio.DefaultAckDeadline)
		}
	}
	if got, want := pubsubio.OutstandingLeases(project, sub, srv.Addr), len(msgs); got != want {
		t.Errorf("got %d leases extended after the read, want %d", got, want)
	}
	// Leased: nothing is delivered again yet.
	if got, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr); err != nil || len(got) != 0 {
		t.Fatalf("draining while leased: got %d messages, error %v; want none", len(got), err)
	}

	// Once the leases lapse, Pub/Sub delivers every message again.
	skew.Store(int64(pubsubio.DefaultAckDeadline + time.Minute))
	got, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sorted(formatted(msgs)), sorted(formatted(got))); diff != "" {
		t.Errorf("messages redelivered (-want +got):\n%s", diff)
	}
}

func TestReadDefaultModeLeavesAckIDEmpty(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	publish(srv, topic, testMessages("auto", 50))
	p, s := beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{Project: project, Subscription: sub, Endpoint: srv.Addr, IdleTimeout: 500 * time.Millisecond})
	passert.Count(s, beam.ParDo(s, missingAckID, read), "without ack ID", 50)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}
}

func TestPublishAckedEmitsConfirmedAckIDs(t *testing.T) {
	valid := func(i int, ackID string) pubsubio.Message {
		return pubsubio.Message{
			Data:       fmt.Appendf(nil, "valid-%d", i),
			Attributes: map[string]string{"ts": fmt.Sprint(i * 3600)},
			AckID:      ackID,
		}
	}
	tooManyAttributes := make(map[string]string, pubsubio.MaxAttributes+1)
	for i := range pubsubio.MaxAttributes + 1 {
		tooManyAttributes[fmt.Sprintf("k%03d", i)] = "v"
	}
	msgs := []pubsubio.Message{
		valid(0, "ack-0"),
		valid(1, "ack-1"),
		valid(2, "ack-2"),
		valid(3, "ack-2"), // Same input message as the one before: its ID once.
		valid(4, ""),      // Not read with ManualAck: nothing to acknowledge.
		{AckID: "bad-empty"},
		{Data: []byte("bad"), Attributes: tooManyAttributes, AckID: "bad-attributes"},
	}
	wantPublished := []any{"ack-0", "ack-1", "ack-2"}
	wantRejected := []any{"bad-empty", "bad-attributes"}

	tests := []struct {
		name  string
		fixed bool // Input in fixed windows, not the global window.
	}{
		{"global window", false},
		{"fixed windows", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, topic, sub := newEmulator(t)
			p, s := beam.NewPipelineWithRoot()
			in := beam.ParDo(s, stampEventTime, beam.CreateList(s, msgs))
			if tt.fixed {
				in = beam.WindowInto(s, window.NewFixedWindows(time.Hour), in)
			}
			rejected, published := pubsubio.PublishAcked(s, pubsubio.PublishConfig{Project: project, Topic: topic, Endpoint: srv.Addr}, in)
			passert.Equals(s, published, wantPublished...)
			passert.Equals(s, beam.ParDo(s, rejectedAckID, rejected), wantRejected...)
			if err := ptest.Run(p); err != nil {
				t.Fatalf("pipeline failed: %v", err)
			}

			got, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{}
			for i := range 5 {
				want = append(want, format(valid(i, "")))
			}
			// The AckID is not sent: the attributes are exactly the input's.
			if diff := cmp.Diff(sorted(want), sorted(formatted(got))); diff != "" {
				t.Errorf("published messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPublishAckedFailureEmitsNothing(t *testing.T) {
	srv, _, _ := newEmulator(t)
	seen := newCollection(t.Name())
	msgs := testMessages("fail", 20)
	for i := range msgs {
		msgs[i].AckID = fmt.Sprintf("ack-%d", i)
	}

	p, s := beam.NewPipelineWithRoot()
	cfg := pubsubio.PublishConfig{Project: project, Topic: "missing", Endpoint: srv.Addr, Timeout: 2 * time.Second}
	_, published := pubsubio.PublishAcked(s, cfg, beam.CreateList(s, msgs))
	beam.ParDo0(s, &collectFn{Key: t.Name()}, published)
	err := ptest.Run(p)
	for _, want := range []string{"pubsubio.Publish: 20 of 20 messages not published to projects/" + project + "/topics/missing", "NotFound"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got pipeline error %v\nwant one containing %q", err, want)
		}
	}
	if got := seen.get(); len(got) != 0 {
		t.Errorf("got ack IDs %v emitted by a failed publish, want none", got)
	}
}

func TestManualAckPublishAckedEndToEnd(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	newOutTopic(t, srv)
	var skew atomic.Int64 // The fake's clock runs ahead of the wall clock by this.
	srv.SetTimeNowFunc(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	msgs := testMessages("e2e", 300)
	publish(srv, topic, msgs)
	var wantOut, wantRejected []pubsubio.Message
	for i, m := range msgs {
		if i%5 == 0 {
			wantRejected = append(wantRejected, m)
		} else {
			wantOut = append(wantOut, m)
		}
	}

	p, s := beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{
		Project: project, Subscription: sub, Endpoint: srv.Addr,
		IdleTimeout: 500 * time.Millisecond, MaxMessages: 60, ManualAck: true,
	})
	rejected, published := pubsubio.PublishAcked(s,
		pubsubio.PublishConfig{Project: project, Topic: outTopic, Endpoint: srv.Addr},
		beam.ParDo(s, poisonEveryFifth, read))
	passert.Count(s, rejected, "rejected", len(wantRejected))
	passert.Empty(s, filter.Include(s, beam.ParDo(s, rejectedAckID, rejected), blank))
	pubsubio.Ack(s, pubsubio.AckConfig{Project: project, Subscription: sub, Endpoint: srv.Addr}, published)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline failed: %v", err)
	}

	// Published messages are acknowledged on the input; rejected ones are
	// not (the pipeline did not acknowledge them after writing them
	// elsewhere) and stay leased.
	if acked, unacked := countAcks(srv, topic); acked != len(wantOut) || unacked != len(wantRejected) {
		t.Errorf("input messages: got %d acknowledged and %d not, want %d and %d", acked, unacked, len(wantOut), len(wantRejected))
	}
	if got, want := pubsubio.OutstandingLeases(project, sub, srv.Addr), len(wantRejected); got != want {
		t.Errorf("got %d leases extended, want %d (the rejected messages)", got, want)
	}
	out, err := pubsubadmin.Drain(context.Background(), project, outTopic+"-sub", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sorted(formatted(wantOut)), sorted(formatted(out))); diff != "" {
		t.Errorf("messages published to %s (-want +got):\n%s", outTopic, diff)
	}

	skew.Store(int64(pubsubio.DefaultAckDeadline + time.Minute))
	again, err := pubsubadmin.Drain(context.Background(), project, sub, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sorted(formatted(wantRejected)), sorted(formatted(again))); diff != "" {
		t.Errorf("messages delivered again after their leases lapsed (-want +got):\n%s", diff)
	}
}

func TestAckFailures(t *testing.T) {
	tests := []struct {
		name string
		sub  string
		want []string
	}{
		{
			name: "subscription missing",
			sub:  "missing",
			want: []string{"pubsubio.Ack: acknowledging 2 messages on projects/" + project + "/subscriptions/missing (emulator 127.0.0.1:", "NotFound"},
		},
		{
			name: "malformed subscription name",
			sub:  "projects/" + project + "/bad",
			want: []string{"pubsubio.Ack: acknowledging 2 messages on projects/" + project + "/bad"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, _ := newEmulator(t)
			p, s := beam.NewPipelineWithRoot()
			pubsubio.Ack(s, pubsubio.AckConfig{Project: project, Subscription: tt.sub, Endpoint: srv.Addr}, beam.Create(s, "m1:1", "", "m2:1"))
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

func TestTryAckConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     pubsubio.AckConfig
		in      any // Element of the input collection.
		wantErr string
	}{
		{"valid", pubsubio.AckConfig{Project: project, Subscription: "s"}, "id", ""},
		{"no project", pubsubio.AckConfig{Subscription: "s"}, "id", "Project"},
		{"no subscription", pubsubio.AckConfig{Project: project}, "id", "Subscription"},
		{"not strings", pubsubio.AckConfig{Project: project, Subscription: "s"}, 3, "pubsubio.Ack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			err := pubsubio.TryAck(s, tt.cfg, beam.Create(s, tt.in))
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

func TestTryPublishAckedConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     pubsubio.PublishConfig
		in      any // Element of the input collection.
		wantErr string
	}{
		{"valid", pubsubio.PublishConfig{Project: project, Topic: "t"}, pubsubio.Message{Data: []byte("x")}, ""},
		{"no topic", pubsubio.PublishConfig{Project: project}, pubsubio.Message{Data: []byte("x")}, "Topic"},
		{"not messages", pubsubio.PublishConfig{Project: project, Topic: "t"}, "x", "pubsubio.PublishAcked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, _, err := pubsubio.TryPublishAcked(s, tt.cfg, beam.Create(s, tt.in))
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
