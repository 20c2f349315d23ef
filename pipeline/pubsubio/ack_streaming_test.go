// Built without -race for the reason given in read_streaming_test.go: it
// cancels a running streaming job.

//go:build !race

package pubsubio_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// TestManualAckStreaming runs ManualAck Read → PublishAcked → Ack as a
// streaming job: the ack IDs PublishAcked emits from FinishBundle reach Ack,
// fused or in another stage, while the job runs.
func TestManualAckStreaming(t *testing.T) {
	tests := []struct {
		name      string
		reshuffle bool // Ack in another stage than PublishAcked.
	}{
		{"ack fused with publish", false},
		{"ack after a fusion break", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, topic, sub := newEmulator(t)
			newOutTopic(t, srv)
			first, second := testMessages("before", 100), testMessages("after", 100)
			publish(srv, topic, first)

			p, s := beam.NewPipelineWithRoot()
			read := pubsubio.Read(s, pubsubio.ReadConfig{
				Project: project, Subscription: sub, Endpoint: srv.Addr, MaxMessages: 30, ManualAck: true,
			})
			_, published := pubsubio.PublishAcked(s, pubsubio.PublishConfig{Project: project, Topic: outTopic, Endpoint: srv.Addr}, read)
			if tt.reshuffle {
				published = beam.Reshuffle(s, published)
			}
			pubsubio.Ack(s, pubsubio.AckConfig{Project: project, Subscription: sub, Endpoint: srv.Addr}, published)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := prism.Execute(ctx, p)
				done <- err
			}()

			timeout := time.After(30 * time.Second)
			// waitAcked waits until n input messages have been acknowledged
			// and none is leased any more (Ack forgets the leases right after
			// the server has recorded the acknowledgements).
			waitAcked := func(n int) {
				t.Helper()
				for {
					acked, _ := countAcks(srv, topic)
					leased := pubsubio.OutstandingLeases(project, sub, srv.Addr)
					if acked >= n && leased == 0 {
						return
					}
					select {
					case err := <-done:
						t.Fatalf("streaming job ended before it was cancelled: %v", err)
					case <-timeout:
						t.Fatalf("got %d of %d input messages acknowledged and %d leased before the timeout", acked, n, leased)
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
			waitAcked(len(first))
			publish(srv, topic, second) // While the job runs.
			waitAcked(len(first) + len(second))

			for _, m := range srv.Messages() {
				if m.Topic == "projects/"+project+"/topics/"+topic && (m.Acks != 1 || m.Deliveries != 1) {
					t.Errorf("input message %s: got %d acks and %d deliveries, want 1 and 1", m.ID, m.Acks, m.Deliveries)
				}
			}
			out, err := pubsubadmin.Drain(context.Background(), project, outTopic+"-sub", srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			want := append(formatted(first), formatted(second)...)
			if diff := cmp.Diff(sorted(want), sorted(formatted(out))); diff != "" {
				t.Errorf("messages published to %s (-want +got):\n%s", outTopic, diff)
			}

			cancel()
			select {
			case err := <-done:
				t.Logf("job ended after cancel: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("streaming job did not end after its context was cancelled")
			}
		})
	}
}
