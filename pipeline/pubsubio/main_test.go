package pubsubio_test

import (
	"context"
	"sync"
	"testing"

	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
)

// project is the project of every test topic and subscription.
const project = "test-project"

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, "prism")
}

// newEmulator starts an in-process Pub/Sub fake on 127.0.0.1 with a topic and
// a subscription to it, both named after the test, and returns it.
func newEmulator(t *testing.T) (srv *pstest.Server, topic, sub string) {
	t.Helper()
	srv = pstest.NewServerWithAddress("127.0.0.1:0")
	t.Cleanup(sync.OnceFunc(func() { srv.Close() }))
	topic, sub = "topic", "sub"
	ctx := context.Background()
	if err := pubsubadmin.CreateTopic(ctx, project, topic, srv.Addr); err != nil {
		t.Fatal(err)
	}
	if err := pubsubadmin.CreateSubscription(ctx, project, topic, sub, srv.Addr); err != nil {
		t.Fatal(err)
	}
	return srv, topic, sub
}

// stoppedEmulator returns the address of a fake, with a topic named "topic",
// that has been shut down.
func stoppedEmulator(t *testing.T) string {
	t.Helper()
	srv := pstest.NewServerWithAddress("127.0.0.1:0")
	if err := pubsubadmin.CreateTopic(context.Background(), project, "topic", srv.Addr); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	return srv.Addr
}
