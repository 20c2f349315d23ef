package pubsubconn

import "testing"

func TestNames(t *testing.T) {
	tests := []struct {
		name, project, in, topic, sub string
	}{
		{"short", "p", "t", "projects/p/topics/t", "projects/p/subscriptions/t"},
		{"full topic kept", "p", "projects/q/topics/t", "projects/q/topics/t", "projects/q/topics/t"},
		{"full subscription kept", "p", "projects/q/subscriptions/s", "projects/q/subscriptions/s", "projects/q/subscriptions/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TopicName(tt.project, tt.in); got != tt.topic {
				t.Errorf("TopicName(%q, %q) = %q, want %q", tt.project, tt.in, got, tt.topic)
			}
			if got := SubscriptionName(tt.project, tt.in); got != tt.sub {
				t.Errorf("SubscriptionName(%q, %q) = %q, want %q", tt.project, tt.in, got, tt.sub)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name, endpoint, env, want string
	}{
		{"endpoint", "127.0.0.1:8085", "127.0.0.1:9", "emulator 127.0.0.1:8085"},
		{"environment", "", "127.0.0.1:9", "emulator 127.0.0.1:9 (PUBSUB_EMULATOR_HOST)"},
		{"production", "", "", "pubsub.googleapis.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PUBSUB_EMULATOR_HOST", tt.env)
			if got := Describe(tt.endpoint); got != tt.want {
				t.Errorf("Describe(%q) with PUBSUB_EMULATOR_HOST=%q = %q, want %q", tt.endpoint, tt.env, got, tt.want)
			}
		})
	}
}
