package pubsubio

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/beamthrottle/beamthrottle/internal/pubsubconn"
)

// newClient makes a client for project at endpoint (see pubsubconn.NewClient).
func newClient(ctx context.Context, project, endpoint string) (*pubsub.Client, error) {
	c, err := pubsubconn.NewClient(ctx, project, endpoint)
	if err != nil {
		return nil, fmt.Errorf("pubsubio: %w", err)
	}
	return c, nil
}

// clientKey identifies a shared client. The emulator variable is part of the
// key because it changes where an endpoint-less client connects.
type clientKey struct {
	project, endpoint, emulatorHost string
}

// publisherKey identifies a shared publisher of a shared client.
type publisherKey struct {
	topic   string
	timeout time.Duration
}

// sharedClient is a client used by every DoFn instance of a worker process
// that has the same configuration, so that a worker holds one connection
// pool per configuration, not one per DoFn instance. Beam Go v2.77.0 never
// calls Teardown (the harness does not take plans down), so clients made per
// instance would accumulate; shared ones do not.
type sharedClient struct {
	key        clientKey
	client     *pubsub.Client
	refs       int                                // guarded by sharedClients.mu
	publishers map[publisherKey]*pubsub.Publisher // guarded by sharedClients.mu
	leases     map[leaseKey]*leaseKeeper          // guarded by sharedClients.mu
}

// leaseKey identifies a shared lease keeper of a shared client.
type leaseKey struct {
	sub      string
	deadline time.Duration
}

var sharedClients = struct {
	mu sync.Mutex
	m  map[clientKey]*sharedClient
}{m: map[clientKey]*sharedClient{}}

// acquireClient returns the shared client for project and endpoint, making it
// if needed. Each call must be matched by one releaseClient.
func acquireClient(ctx context.Context, project, endpoint string) (*sharedClient, error) {
	key := clientKey{project, endpoint, os.Getenv("PUBSUB_EMULATOR_HOST")}
	sharedClients.mu.Lock()
	defer sharedClients.mu.Unlock()
	if sc, ok := sharedClients.m[key]; ok {
		sc.refs++
		return sc, nil
	}
	// The client outlives the DoFn call that made it.
	c, err := newClient(context.WithoutCancel(ctx), project, endpoint)
	if err != nil {
		return nil, err
	}
	sc := &sharedClient{
		key: key, client: c, refs: 1,
		publishers: map[publisherKey]*pubsub.Publisher{},
		leases:     map[leaseKey]*leaseKeeper{},
	}
	sharedClients.m[key] = sc
	return sc, nil
}

// releaseClient drops one reference to sc, stopping its publishers and
// closing it when the last one is gone.
func releaseClient(sc *sharedClient) {
	sharedClients.mu.Lock()
	sc.refs--
	last := sc.refs == 0
	if last {
		delete(sharedClients.m, sc.key)
	}
	sharedClients.mu.Unlock()
	if !last {
		return
	}
	for _, p := range sc.publishers {
		p.Stop()
	}
	sc.client.Close()
}

// publisher returns sc's publisher for topic whose publish calls give up
// after timeout, making it if needed. Publishers are safe for concurrent use.
func (sc *sharedClient) publisher(topic string, timeout time.Duration) *pubsub.Publisher {
	key := publisherKey{topic, timeout}
	sharedClients.mu.Lock()
	defer sharedClients.mu.Unlock()
	if p, ok := sc.publishers[key]; ok {
		return p
	}
	p := sc.client.Publisher(topic)
	p.PublishSettings.Timeout = timeout
	sc.publishers[key] = p
	return p
}

// leaseKeeper returns sc's lease keeper for subscription sub (a full name)
// that asks for deadline, making it if needed. Sharing it lets the round
// that acknowledges messages stop the extension of their leases even when
// another DoFn instance of the process pulled them.
func (sc *sharedClient) leaseKeeper(sub string, deadline time.Duration) *leaseKeeper {
	key := leaseKey{sub, deadline}
	sharedClients.mu.Lock()
	defer sharedClients.mu.Unlock()
	if k, ok := sc.leases[key]; ok {
		return k
	}
	k := &leaseKeeper{
		extend: func(ctx context.Context, ackIDs []string, d time.Duration) error {
			return modifyAckDeadline(ctx, sc.client, sub, ackIDs, d)
		},
		deadline: deadline,
	}
	sc.leases[key] = k
	return k
}

// leaseKeepers returns every lease keeper of the process for subscription
// sub (a full name) on the service a client with endpoint connects to,
// whatever project, endpoint spelling or deadline it was made with. Ack IDs
// are unique within a service, so removing one from a keeper that does not
// hold it is a no-op.
func leaseKeepers(endpoint, sub string) []*leaseKeeper {
	target := clientKey{endpoint: endpoint, emulatorHost: os.Getenv("PUBSUB_EMULATOR_HOST")}.service()
	sharedClients.mu.Lock()
	defer sharedClients.mu.Unlock()
	var out []*leaseKeeper
	for _, sc := range sharedClients.m {
		if sc.key.service() != target {
			continue
		}
		for key, k := range sc.leases {
			if key.sub == sub {
				out = append(out, k)
			}
		}
	}
	return out
}

// service returns the emulator address a client with key k connects to, or
// "" for the production service.
func (k clientKey) service() string {
	if k.endpoint != "" {
		return k.endpoint
	}
	return k.emulatorHost
}

// forgetLeases stops the extension of ackIDs of subscription sub on the
// service at endpoint by every lease keeper of the process.
func forgetLeases(endpoint, sub string, ackIDs []string) {
	for _, k := range leaseKeepers(endpoint, sub) {
		k.remove(ackIDs)
	}
}
