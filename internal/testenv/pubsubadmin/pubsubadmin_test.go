package pubsubadmin_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

const project = "test-project"

// newServer starts an in-process Pub/Sub fake on 127.0.0.1 and returns its
// address.
func newServer(t *testing.T) string {
	t.Helper()
	srv := pstest.NewServerWithAddress("127.0.0.1:0")
	t.Cleanup(func() { srv.Close() })
	return srv.Addr
}

func TestPublishAndDrain(t *testing.T) {
	ctx := context.Background()
	addr := newServer(t)
	if err := pubsubadmin.CreateTopic(ctx, project, "topic", addr); err != nil {
		t.Fatal(err)
	}
	// A full name means the same as an ID.
	if err := pubsubadmin.CreateSubscription(ctx, project, "projects/"+project+"/topics/topic", "sub", addr); err != nil {
		t.Fatal(err)
	}
	sent := []pubsubio.Message{
		{Data: []byte("a")},
		{Data: []byte("b"), Attributes: map[string]string{"k": "v"}},
		{Attributes: map[string]string{"only": "attributes"}},
	}
	ids, err := pubsubadmin.PublishMessages(ctx, project, "topic", addr, sent)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(sent) || slices.Contains(ids, "") {
		t.Fatalf("PublishMessages: got IDs %q, want %d non-empty IDs", ids, len(sent))
	}

	got, err := pubsubadmin.Drain(ctx, project, "projects/"+project+"/subscriptions/sub", addr)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]pubsubio.Message, len(sent))
	for i, m := range sent {
		want[i] = pubsubio.Message{Data: m.Data, Attributes: m.Attributes, ID: ids[i]}
	}
	byID := cmpopts.SortSlices(func(a, b pubsubio.Message) bool { return a.ID < b.ID })
	if diff := cmp.Diff(want, got, byID, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(pubsubio.Message{}, "PublishTime")); diff != "" {
		t.Errorf("Drain: (-want +got)\n%s", diff)
	}
	for _, m := range got {
		if m.PublishTime <= 0 {
			t.Errorf("Drain: message %s has PublishTime %d, want > 0", m.ID, m.PublishTime)
		}
	}

	// Drain acknowledged everything it returned.
	if again, err := pubsubadmin.Drain(ctx, project, "sub", addr); err != nil || len(again) != 0 {
		t.Errorf("second Drain: got %d messages, %v; want none", len(again), err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	addr := newServer(t)
	if err := pubsubadmin.CreateTopic(ctx, project, "topic", addr); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"topic exists", func() error { return pubsubadmin.CreateTopic(ctx, project, "topic", addr) }, "pubsubadmin: creating topic projects/" + project + "/topics/topic"},
		{"no such topic", func() error { return pubsubadmin.CreateSubscription(ctx, project, "missing", "sub", addr) }, "pubsubadmin: creating subscription projects/" + project + "/subscriptions/sub"},
		{"publish to no such topic", func() error {
			_, err := pubsubadmin.PublishMessages(ctx, project, "missing", addr, []pubsubio.Message{{Data: []byte("x")}})
			return err
		}, "pubsubadmin: publishing to projects/" + project + "/topics/missing"},
		{"drain no such subscription", func() error {
			_, err := pubsubadmin.Drain(ctx, project, "missing", addr)
			return err
		}, "pubsubadmin: pulling from projects/" + project + "/subscriptions/missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
