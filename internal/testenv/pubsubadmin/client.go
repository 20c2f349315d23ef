package pubsubadmin

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

// The client and naming rules below are those of package pubsubio (its
// client.go), so that an endpoint or a name means the same to both.

// newClient makes a client for project at endpoint: with endpoint empty the
// library's defaults apply (PUBSUB_EMULATOR_HOST if set, else the production
// service with Application Default Credentials); otherwise an emulator
// dialled without TLS or credentials.
func newClient(ctx context.Context, project, endpoint string) (*pubsub.Client, error) {
	var opts []option.ClientOption
	if endpoint != "" {
		opts = []option.ClientOption{
			option.WithEndpoint(endpoint),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
			option.WithoutAuthentication(),
			option.WithTelemetryDisabled(),
		}
	}
	c, err := pubsub.NewClient(ctx, project, opts...)
	if err != nil {
		return nil, fmt.Errorf("pubsubadmin: connecting to %s: %w", describeEndpoint(endpoint), err)
	}
	return c, nil
}

// describeEndpoint names where a client with this endpoint connects, for
// error messages.
func describeEndpoint(endpoint string) string {
	if endpoint != "" {
		return "emulator " + endpoint
	}
	if e := os.Getenv("PUBSUB_EMULATOR_HOST"); e != "" {
		return "emulator " + e + " (PUBSUB_EMULATOR_HOST)"
	}
	return "pubsub.googleapis.com"
}

// topicName returns the full name of topic in project; a topic that already
// is a full name ("projects/p/topics/t") is returned unchanged.
func topicName(project, topic string) string {
	if strings.HasPrefix(topic, "projects/") {
		return topic
	}
	return "projects/" + project + "/topics/" + topic
}

// subscriptionName is topicName for subscriptions.
func subscriptionName(project, sub string) string {
	if strings.HasPrefix(sub, "projects/") {
		return sub
	}
	return "projects/" + project + "/subscriptions/" + sub
}
