package pubsubio

import (
	"errors"
	"time"
)

// DefaultPublishTimeout is the PublishConfig.Timeout used when it is zero.
const DefaultPublishTimeout = 60 * time.Second

// PublishConfig says where Publish writes. It is copied into the DoFn and
// serialised to workers. The zero values of the optional fields mean the
// documented defaults.
type PublishConfig struct {
	// Project is the Google Cloud project of the topic. Required.
	Project string
	// Topic is the topic ID, or a full name "projects/p/topics/t". Required.
	// Publish does not create it.
	Topic string
	// Endpoint is the host:port of a Pub/Sub emulator, dialled without TLS or
	// credentials. Empty means PUBSUB_EMULATOR_HOST if set in the worker's
	// environment, else the production service with Application Default
	// Credentials.
	Endpoint string
	// Timeout bounds how long one publish call may take, retries of
	// transient errors (Unavailable, ...) included, before the message
	// counts as failed and its bundle fails. Zero means
	// DefaultPublishTimeout.
	Timeout time.Duration
}

// check reports a configuration that can never work.
func (c PublishConfig) check() error {
	switch {
	case c.Project == "":
		return errors.New("PublishConfig.Project is empty")
	case c.Topic == "":
		return errors.New("PublishConfig.Topic is empty")
	case c.Timeout < 0:
		return errors.New("PublishConfig.Timeout is negative")
	}
	return nil
}

// timeout returns Timeout or its default.
func (c PublishConfig) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultPublishTimeout
	}
	return c.Timeout
}
