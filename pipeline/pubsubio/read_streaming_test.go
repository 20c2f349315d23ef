// Cancelling a Prism job while its SDK worker is busy trips a data race
// inside Beam Go v2.77.0 itself (harness.MainWithOptions closes its response
// channel, harness.go:195, unordered with a bundle goroutine's earlier send
// on it, harness.go:213), which the race detector reports against whichever
// test cancels. So this test, the only one that cancels a running job, is
// built without -race; `go test ./pipeline/pubsubio/` runs it.

//go:build !race

package pubsubio_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register.DoFn1x0[pubsubio.Message](&recordFn{})
}

// records collects what recordFn saw, by key.
var records sync.Map // string → chan string

// recordFn sends format(m) of every message to the channel in records
// under Key.
type recordFn struct {
	Key string
}

func (f *recordFn) ProcessElement(m pubsubio.Message) {
	ch, _ := records.Load(f.Key)
	ch.(chan string) <- format(m)
}

func TestReadStreamingStopsOnCancel(t *testing.T) {
	srv, topic, sub := newEmulator(t)
	seen := make(chan string, 1000)
	records.Store(t.Name(), seen)
	first, second := testMessages("before", 100), testMessages("after", 100)
	publish(srv, topic, first)

	p, s := beam.NewPipelineWithRoot()
	read := pubsubio.Read(s, pubsubio.ReadConfig{Project: project, Subscription: sub, Endpoint: srv.Addr})
	beam.ParDo0(s, &recordFn{Key: t.Name()}, read)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := prism.Execute(ctx, p)
		done <- err
	}()

	timeout := time.After(30 * time.Second)
	receive := func(n int) []string {
		var got []string
		for len(got) < n {
			select {
			case m := <-seen:
				got = append(got, m)
			case err := <-done:
				t.Fatalf("streaming job ended before it was cancelled: %v", err)
			case <-timeout:
				t.Fatalf("got %d of %d messages before the timeout", len(got), n)
			}
		}
		return got
	}
	got := receive(len(first))
	publish(srv, topic, second) // While the job runs.
	got = append(got, receive(len(second))...)
	want := append(formatted(first), formatted(second)...)
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("messages read (-want +got):\n%s", diff)
	}

	// Each round acknowledges the one before; the job keeps polling, so all
	// get acknowledged while it runs.
	for unacked := len(want); unacked > 0; {
		unacked = 0
		for _, m := range srv.Messages() {
			if m.Acks == 0 {
				unacked++
			}
		}
		select {
		case <-timeout:
			t.Fatalf("%d messages still unacknowledged", unacked)
		case <-time.After(10 * time.Millisecond):
		}
	}

	cancel()
	select {
	case err := <-done:
		t.Logf("job ended after cancel: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("streaming job did not end after its context was cancelled")
	}
}
