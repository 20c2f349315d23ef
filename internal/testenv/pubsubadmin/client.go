package pubsubadmin

import (
	"context"
	"fmt"

	"cloud.google.com/go/pubsub/v2"

	"github.com/beamthrottle/beamthrottle/internal/pubsubconn"
)

// newClient makes a client for project at endpoint (see pubsubconn.NewClient).
func newClient(ctx context.Context, project, endpoint string) (*pubsub.Client, error) {
	c, err := pubsubconn.NewClient(ctx, project, endpoint)
	if err != nil {
		return nil, fmt.Errorf("pubsubadmin: %w", err)
	}
	return c, nil
}
