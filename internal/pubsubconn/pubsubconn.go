// Package pubsubconn is how beamthrottle reaches Pub/Sub: the client for an
// endpoint, the name of where it connects for error messages, and full topic
// and subscription names. Package pubsubio and the test environment's
// pubsubadmin both use it, so that an endpoint or a name means the same to
// both.
package pubsubconn

import (
	"context"
	"fmt"
	"os"
	"strings"

	"cloud.google.com/go/pubsub/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// options returns the options that point a client at endpoint: a Pub/Sub
// emulator dialled without TLS or credentials. With endpoint empty the
// library's defaults apply: PUBSUB_EMULATOR_HOST if set, else the production
// service with Application Default Credentials.
func options(endpoint string) []option.ClientOption {
	if endpoint == "" {
		return nil
	}
	return []option.ClientOption{
		option.WithEndpoint(endpoint),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithoutAuthentication(),
		option.WithTelemetryDisabled(),
	}
}

// NewClient makes a client for project at endpoint (see options). Its error
// names where it tried to connect, without a package prefix.
func NewClient(ctx context.Context, project, endpoint string) (*pubsub.Client, error) {
	c, err := pubsub.NewClient(ctx, project, options(endpoint)...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", Describe(endpoint), err)
	}
	return c, nil
}

// Describe names where a client with this endpoint connects, for error
// messages.
func Describe(endpoint string) string {
	if endpoint != "" {
		return "emulator " + endpoint
	}
	if e := os.Getenv("PUBSUB_EMULATOR_HOST"); e != "" {
		return "emulator " + e + " (PUBSUB_EMULATOR_HOST)"
	}
	return "pubsub.googleapis.com"
}

// TopicName returns the full name of topic in project; a topic that already
// is a full name ("projects/p/topics/t") is returned unchanged.
func TopicName(project, topic string) string {
	if strings.HasPrefix(topic, "projects/") {
		return topic
	}
	return "projects/" + project + "/topics/" + topic
}

// SubscriptionName is TopicName for subscriptions.
func SubscriptionName(project, sub string) string {
	if strings.HasPrefix(sub, "projects/") {
		return sub
	}
	return "projects/" + project + "/subscriptions/" + sub
}
