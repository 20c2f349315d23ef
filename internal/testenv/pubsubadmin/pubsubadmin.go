// Package pubsubadmin sets up and inspects Pub/Sub topics and subscriptions
// for this repository's tests, demo and emulator (cmd/pubsub-emulator,
// pstest): it creates topics and subscriptions, publishes a batch of
// [pubsubio.Message] values and drains a subscription. The pipeline itself
// reads and writes with package pubsubio.
//
// Each function takes endpoint with the meaning of
// pubsubio.PublishConfig.Endpoint (empty: PUBSUB_EMULATOR_HOST if set, else
// the production service with Application Default Credentials; otherwise an
// emulator dialled without TLS or credentials) and opens and closes its own
// client. Topic and subscription arguments are IDs or full names
// ("projects/p/topics/t").
package pubsubadmin

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/beamthrottle/beamthrottle/internal/pubsubconn"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

// ackBatch is the most ack IDs sent in one Acknowledge request, as in
// package pubsubio.
const ackBatch = 1000

// CreateTopic creates topic (an ID or a full name) in project.
func CreateTopic(ctx context.Context, project, topic, endpoint string) error {
	c, err := newClient(ctx, project, endpoint)
	if err != nil {
		return err
	}
	defer c.Close()
	name := pubsubconn.TopicName(project, topic)
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: name}); err != nil {
		return fmt.Errorf("pubsubadmin: creating topic %s: %w", name, err)
	}
	return nil
}

// CreateSubscription creates a pull subscription sub of topic in project
// (IDs or full names) with the service's default ack deadline.
func CreateSubscription(ctx context.Context, project, topic, sub, endpoint string) error {
	c, err := newClient(ctx, project, endpoint)
	if err != nil {
		return err
	}
	defer c.Close()
	name := pubsubconn.SubscriptionName(project, sub)
	_, err = c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: name, Topic: pubsubconn.TopicName(project, topic)})
	if err != nil {
		return fmt.Errorf("pubsubadmin: creating subscription %s: %w", name, err)
	}
	return nil
}

// PublishMessages publishes msgs to topic in project and waits until all are
// confirmed. It returns their server IDs in order; on failure, the IDs of
// the messages that were published (empty for the others) and the first
// error. It does not call [pubsubio.Validate]; only Data and Attributes of
// each message are sent.
func PublishMessages(ctx context.Context, project, topic, endpoint string, msgs []pubsubio.Message) ([]string, error) {
	c, err := newClient(ctx, project, endpoint)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p := c.Publisher(pubsubconn.TopicName(project, topic))
	defer p.Stop()
	results := make([]*pubsub.PublishResult, len(msgs))
	for i, m := range msgs {
		results[i] = p.Publish(ctx, &pubsub.Message{Data: m.Data, Attributes: m.Attributes})
	}
	ids := make([]string, len(msgs))
	var errs []error
	for i, r := range results {
		ids[i], err = r.Get(ctx)
		if err != nil && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("pubsubadmin: publishing to %s: %w", p, err))
		}
	}
	return ids, errors.Join(errs...)
}

// Drain pulls and acknowledges sub's messages until a Pull returns none, and
// returns them with Data, Attributes, ID and PublishTime set (AckID empty).
// It asks the server to answer at once rather than wait for messages
// (return_immediately), which an emulator honours exactly; against the
// production service a Drain may stop before the subscription is empty.
func Drain(ctx context.Context, project, sub, endpoint string) ([]pubsubio.Message, error) {
	c, err := newClient(ctx, project, endpoint)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	name := pubsubconn.SubscriptionName(project, sub)
	var out []pubsubio.Message
	for {
		//lint:ignore SA1019 Deprecated for production use, but exactly what draining an emulator needs.
		resp, err := c.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: name, MaxMessages: pubsubio.DefaultMaxMessages, ReturnImmediately: true})
		if err != nil {
			return out, fmt.Errorf("pubsubadmin: pulling from %s: %w", name, err)
		}
		rms := resp.GetReceivedMessages()
		if len(rms) == 0 {
			return out, nil
		}
		ackIDs := make([]string, len(rms))
		for i, rm := range rms {
			ackIDs[i] = rm.GetAckId()
			pm := rm.GetMessage()
			out = append(out, pubsubio.Message{
				Data:        pm.GetData(),
				Attributes:  pm.GetAttributes(),
				ID:          pm.GetMessageId(),
				PublishTime: pm.GetPublishTime().AsTime().UnixMicro(),
			})
		}
		for len(ackIDs) > 0 {
			n := min(len(ackIDs), ackBatch)
			if err := c.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: name, AckIds: ackIDs[:n]}); err != nil {
				return out, fmt.Errorf("pubsubadmin: acknowledging on %s: %w", name, err)
			}
			ackIDs = ackIDs[n:]
		}
	}
}
