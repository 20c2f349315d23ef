package pubsubio

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/beamthrottle/beamthrottle/internal/pubsubconn"
)

// Defaults of ReadConfig, used for zero fields.
const (
	DefaultMaxMessages  = 1000
	DefaultAckDeadline  = 60 * time.Second
	DefaultMaxExtension = 10 * time.Minute
	DefaultPollTimeout  = 10 * time.Second
)

// ReadConfig says what Read reads and how. It is copied into the DoFn and
// serialised to workers. The zero values of the optional fields mean the
// documented defaults.
type ReadConfig struct {
	// Project is the Google Cloud project of the subscription. Required.
	Project string
	// Subscription is the subscription ID, or a full name
	// "projects/p/subscriptions/s". Required. Read does not create it.
	Subscription string
	// Endpoint is the host:port of a Pub/Sub emulator, dialled without TLS or
	// credentials. Empty means PUBSUB_EMULATOR_HOST if set in the worker's
	// environment, else the production service with Application Default
	// Credentials.
	Endpoint string
	// MaxMessages is the most messages one Pull returns, and so the most
	// messages one bundle of Read emits. Zero means DefaultMaxMessages.
	MaxMessages int
	// IdleTimeout, if positive, ends the read once Pull has returned nothing
	// for this long: Read then drains a backlog and its pipeline can finish
	// (batch replay). Zero reads forever (streaming); stop the job by
	// cancelling its context.
	IdleTimeout time.Duration
	// AckDeadline is the lease Read asks for on each pulled message, right
	// after the Pull and again every 2/3 of it, so that a message is not
	// delivered again while its bundle is still running or waiting to be
	// committed and acknowledged by the next round. Between 10s and 600s;
	// zero means DefaultAckDeadline.
	AckDeadline time.Duration
	// MaxExtension bounds how long a pulled message is kept leased while it
	// waits to be acknowledged. A message not acknowledged by then (its
	// bundle is very slow, failed, or its job died; in ManualAck mode, the
	// pipeline has not passed its ack ID to Ack yet) is delivered again once
	// its last lease lapses: a duplicate, not a loss. Zero means
	// DefaultMaxExtension.
	MaxExtension time.Duration
	// PollTimeout bounds how long one Pull waits for messages. Zero means
	// DefaultPollTimeout.
	PollTimeout time.Duration
	// ManualAck makes the pipeline, not Read, acknowledge messages. Read
	// emits each Message with its AckID set and never acknowledges it; it
	// keeps the message leased (AckDeadline, renewed, for at most
	// MaxExtension; after that Pub/Sub delivers it again) until [Ack]
	// acknowledges it. The pipeline passes the AckID to Ack after writing
	// the message's outputs durably (see [PublishAcked]), so a message
	// buffered downstream when the job dies is delivered again rather than
	// lost. Every message must reach Ack eventually (a message the pipeline
	// drops must be acknowledged too), or it is delivered again after
	// MaxExtension. False: Read acknowledges each message once the runner
	// has committed the bundle that emitted it.
	ManualAck bool
}

// check reports a configuration that can never work.
func (c ReadConfig) check() error {
	switch {
	case c.Project == "":
		return errors.New("ReadConfig.Project is empty")
	case c.Subscription == "":
		return errors.New("ReadConfig.Subscription is empty")
	case c.MaxMessages < 0:
		return errors.New("ReadConfig.MaxMessages is negative")
	case c.IdleTimeout < 0:
		return errors.New("ReadConfig.IdleTimeout is negative")
	case c.AckDeadline != 0 && (c.AckDeadline < 10*time.Second || c.AckDeadline > 600*time.Second):
		return errors.New("ReadConfig.AckDeadline is outside [10s, 600s]")
	case c.MaxExtension < 0:
		return errors.New("ReadConfig.MaxExtension is negative")
	case c.PollTimeout < 0:
		return errors.New("ReadConfig.PollTimeout is negative")
	}
	return nil
}

// withDefaults returns c with zero optional fields set to their defaults.
func (c ReadConfig) withDefaults() ReadConfig {
	c.MaxMessages = cmp.Or(c.MaxMessages, DefaultMaxMessages)
	c.AckDeadline = cmp.Or(c.AckDeadline, DefaultAckDeadline)
	c.MaxExtension = cmp.Or(c.MaxExtension, DefaultMaxExtension)
	c.PollTimeout = cmp.Or(c.PollTimeout, DefaultPollTimeout)
	return c
}

// Lease returns how long a message Read pulled with cfg may stay leased
// after its reader stopped (its process was killed, say), before Pub/Sub
// delivers it again: the longer of cfg.AckDeadline (or its default), the
// lease Read asks for and renews, and the subscription's own ack deadline,
// which holds until Read's first request. A Read whose IdleTimeout is
// shorter may stop, finding nothing, while messages a stopped reader held
// are still leased. It asks Pub/Sub for the subscription's configuration;
// if that fails, it returns Read's own lease and the error.
func Lease(ctx context.Context, cfg ReadConfig) (time.Duration, error) {
	lease := cfg.withDefaults().AckDeadline
	c, err := newClient(ctx, cfg.Project, cfg.Endpoint)
	if err != nil {
		return lease, err
	}
	defer c.Close()
	name := pubsubconn.SubscriptionName(cfg.Project, cfg.Subscription)
	sub, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: name})
	if err != nil {
		return lease, fmt.Errorf("pubsubio: reading subscription %s: %w", name, err)
	}
	return max(lease, time.Duration(sub.GetAckDeadlineSeconds())*time.Second), nil
}
