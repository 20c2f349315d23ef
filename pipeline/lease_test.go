package pipeline

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestIdleTimeoutShorterThanLease: at start, an --idle_timeout shorter
// than the lease of the messages pulled from --subscription (the longer of
// the subscription's ack deadline, read from Pub/Sub, and the reader's own
// minute) draws a warning naming the flag and the lease: a run restarted
// within the lease of one that stopped could stop before the messages it
// held come back, and report the subscription drained. An idle timeout at
// least as long draws none; a subscription whose ack deadline cannot be
// read is compared with the reader's lease, and says so.
func TestIdleTimeoutShorterThanLease(t *testing.T) {
	ps := emulator(t, "dlq")
	ctx := context.Background()
	c, err := pubsub.NewClient(ctx, project, option.WithEndpoint(ps.Addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/" + project + "/subscriptions/slow-sub", Topic: "projects/" + project + "/topics/dlq", AckDeadlineSeconds: 120,
	}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name     string
		sub      string
		host     string
		idle     time.Duration
		fresh    bool     // Options.FreshSubscription
		warnings []string // each a text the warnings must contain; none if empty
	}{
		{"no idle timeout", "dlq-sub", ps.Addr, 0, false, nil},
		{"a fresh subscription", "dlq-sub", ps.Addr, 2 * time.Second, true, nil},
		{"shorter than the reader's lease", "dlq-sub", ps.Addr, 20 * time.Second, false,
			[]string{"warning: --idle_timeout: 20s is shorter than the lease of the messages pulled from --subscription=dlq-sub (1m0s)"}},
		{"as long as the reader's lease", "dlq-sub", ps.Addr, time.Minute, false, nil},
		{"shorter than the subscription's ack deadline", "slow-sub", ps.Addr, 90 * time.Second, false,
			[]string{"--idle_timeout: 1m30s is shorter than the lease of the messages pulled from --subscription=slow-sub (2m0s)"}},
		{"as long as the subscription's ack deadline", "slow-sub", ps.Addr, 2 * time.Minute, false, nil},
		{"ack deadline unreadable", "dlq-sub", closed, 20 * time.Second, false,
			[]string{"cannot read the ack deadline of --subscription=dlq-sub", "20s is shorter than the lease of the messages pulled from --subscription=dlq-sub (1m0s)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t)
			o.Subscription, o.PubSubHost, o.IdleTimeout, o.FreshSubscription = tc.sub, tc.host, tc.idle, tc.fresh
			o.Caller = "echo"
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			var warn bytes.Buffer
			if err := o.Check(ctx, &warn); err != nil {
				t.Fatalf("Check: %v", err)
			}
			got := warn.String()
			if len(tc.warnings) == 0 && got != "" {
				t.Errorf("warnings %q, want none", got)
			}
			for _, w := range tc.warnings {
				if !strings.Contains(got, w) {
					t.Errorf("warnings %q, want one containing %q", got, w)
				}
			}
		})
	}
}
