package pubsubio

import "errors"

// AckConfig says which subscription Ack acknowledges messages on. It is
// copied into the DoFn and serialised to workers.
type AckConfig struct {
	// Project is the Google Cloud project of the subscription. Required.
	Project string
	// Subscription is the subscription ID, or a full name
	// "projects/p/subscriptions/s": the one the messages were read from
	// (ReadConfig.Subscription). Required.
	Subscription string
	// Endpoint is the host:port of a Pub/Sub emulator, dialled without TLS or
	// credentials. Empty means PUBSUB_EMULATOR_HOST if set in the worker's
	// environment, else the production service with Application Default
	// Credentials.
	Endpoint string
}

// check reports a configuration that can never work.
func (c AckConfig) check() error {
	switch {
	case c.Project == "":
		return errors.New("AckConfig.Project is empty")
	case c.Subscription == "":
		return errors.New("AckConfig.Subscription is empty")
	}
	return nil
}
