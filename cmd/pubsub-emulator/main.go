// Command pubsub-emulator runs an in-memory Google Cloud Pub/Sub emulator on
// loopback for local runs and tests of the beamthrottle pipeline.
//
// It serves the fake from cloud.google.com/go/pubsub/v2/pstest, creates the
// topics and subscriptions it is given, prints the PUBSUB_EMULATOR_HOST to
// export, and runs until SIGINT or SIGTERM. State lives in memory only.
//
//	pubsub-emulator --addr 127.0.0.1:8085 --project beamthrottle-local \
//		--topics dead-letter --subscriptions dead-letter-replay=dead-letter
//
// Unlike a bare pstest server, which refuses gRPC requests over 4 MiB, it
// accepts publish requests up to the service's 10 MB limit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/grpc"
)

const (
	// maxRequestBytes is the largest gRPC request the emulator accepts: a
	// 10 MB publish request plus headroom.
	maxRequestBytes = 11 << 20
	// stopGrace is how long a shutdown waits for open calls (streaming
	// pulls never end by themselves) before cutting them.
	stopGrace = 5 * time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "pubsub-emulator:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	addr    string
	project string
	topics  []string
	subs    []subscription
}

// subscription is one --subscriptions entry.
type subscription struct {
	name, topic string
}

// parseFlags parses args into a config; usage and errors go to stderr.
func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("pubsub-emulator", flag.ContinueOnError)
	var c config
	var topics, subs string
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8085", "`host:port` to listen on (port 0 picks a free one)")
	fs.StringVar(&c.project, "project", "beamthrottle-local", "project of the topics and subscriptions")
	fs.StringVar(&topics, "topics", "", "comma-separated topic IDs to create")
	fs.StringVar(&subs, "subscriptions", "", "comma-separated `sub=topic` pull subscriptions to create; their topics are created too")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.project == "" {
		return config{}, errors.New("--project is empty")
	}
	for _, t := range splitList(topics) {
		c.topics = appendNew(c.topics, t)
	}
	for _, s := range splitList(subs) {
		name, topic, ok := strings.Cut(s, "=")
		if !ok || name == "" || topic == "" {
			return config{}, fmt.Errorf("--subscriptions entry %q is not sub=topic", s)
		}
		c.subs = append(c.subs, subscription{name, topic})
		c.topics = appendNew(c.topics, topic)
	}
	return c, nil
}

// splitList splits a comma-separated list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// appendNew appends s to list unless it is already there.
func appendNew(list []string, s string) []string {
	for _, e := range list {
		if e == s {
			return list
		}
	}
	return append(list, s)
}

// run parses args, serves the emulator until ctx is done, and writes what it
// created and the PUBSUB_EMULATOR_HOST line to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	c, err := parseFlags(args)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	// pstest serves the fake on a listener of its own, with gRPC's default
	// 4 MiB request limit; serve the same fake here with a 10 MB one.
	fake := pstest.NewServerWithAddress("127.0.0.1:0")
	defer fake.Close()
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(maxRequestBytes))
	pubsubpb.RegisterPublisherServer(gs, &fake.GServer)
	pubsubpb.RegisterSubscriberServer(gs, &fake.GServer)
	pubsubpb.RegisterSchemaServiceServer(gs, &fake.GServer)

	for _, t := range c.topics {
		name := "projects/" + c.project + "/topics/" + t
		if _, err := fake.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: name}); err != nil {
			lis.Close()
			return fmt.Errorf("creating topic %s: %w", name, err)
		}
		fmt.Fprintln(stdout, "topic", name)
	}
	for _, s := range c.subs {
		name := "projects/" + c.project + "/subscriptions/" + s.name
		topic := "projects/" + c.project + "/topics/" + s.topic
		if _, err := fake.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: name, Topic: topic}); err != nil {
			lis.Close()
			return fmt.Errorf("creating subscription %s: %w", name, err)
		}
		fmt.Fprintln(stdout, "subscription", name, "of", topic)
	}

	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	fmt.Fprintf(stdout, "export PUBSUB_EMULATOR_HOST=%s\n", lis.Addr())

	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(stopGrace):
		gs.Stop()
	}
	fmt.Fprintln(stdout, "stopped")
	return nil
}
