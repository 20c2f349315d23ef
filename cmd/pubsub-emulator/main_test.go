package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/google/go-cmp/cmp"
)

// start runs the emulator with args in the background and returns the
// address it printed, the lines before it, and a function that stops it and
// returns run's error.
func start(t *testing.T, args ...string) (addr string, lines []string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, w)
		w.CloseWithError(io.EOF)
		done <- err
	}()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if a, ok := strings.CutPrefix(line, "export PUBSUB_EMULATOR_HOST="); ok {
			addr = a
			break
		}
		lines = append(lines, line)
	}
	if addr == "" {
		cancel()
		t.Fatalf("no PUBSUB_EMULATOR_HOST line; output so far: %q", lines)
	}
	go io.Copy(io.Discard, r) // Keep draining so that run never blocks on its output.
	var result error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case result = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("emulator did not stop after its context was cancelled")
			}
		}
		return result
	}
	t.Cleanup(func() { stop() })
	return addr, lines, stop
}

func TestRunPublishPullStop(t *testing.T) {
	const proj = "emulator-test"
	addr, lines, stop := start(t, "--addr", "127.0.0.1:0", "--project", proj, "--topics", "events", "--subscriptions", "replay=dead-letter,audit=events")
	wantLines := []string{
		"topic projects/emulator-test/topics/events",
		"topic projects/emulator-test/topics/dead-letter",
		"subscription projects/emulator-test/subscriptions/replay of projects/emulator-test/topics/dead-letter",
		"subscription projects/emulator-test/subscriptions/audit of projects/emulator-test/topics/events",
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("startup output (-want +got):\n%s", diff)
	}
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
		t.Errorf("got address %q, want one on 127.0.0.1", addr)
	}

	ctx := context.Background()
	big := make([]byte, 5<<20) // Over pstest's usual 4 MiB gRPC limit.
	sent := []pubsubio.Message{
		{Data: []byte("hello"), Attributes: map[string]string{"reason": "throttled"}},
		{Data: big},
	}
	if _, err := pubsubadmin.PublishMessages(ctx, proj, "dead-letter", addr, sent); err != nil {
		t.Fatalf("publishing through the emulator: %v", err)
	}
	got, err := pubsubadmin.Drain(ctx, proj, "replay", addr)
	if err != nil {
		t.Fatalf("pulling through the emulator: %v", err)
	}
	if len(got) != len(sent) {
		t.Fatalf("pulled %d messages, want %d", len(got), len(sent))
	}
	byLen := map[int]pubsubio.Message{len(got[0].Data): got[0], len(got[1].Data): got[1]}
	for _, want := range sent {
		g := byLen[len(want.Data)]
		if !bytes.Equal(g.Data, want.Data) { // Not cmp: slow on megabytes.
			t.Errorf("pulled message of %d bytes: data differs from the published one", len(want.Data))
		}
		if diff := cmp.Diff(want.Attributes, g.Attributes); diff != "" {
			t.Errorf("pulled message of %d bytes: attributes (-want +got):\n%s", len(want.Data), diff)
		}
	}

	if err := stop(); err != nil {
		t.Errorf("run returned %v after cancel, want nil", err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("emulator still accepts connections on %s after stopping", addr)
	}
}

func TestRunFlagErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"help", []string{"-h"}, flag.ErrHelp.Error()},
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
		{"extra argument", []string{"--addr", "127.0.0.1:0", "extra"}, "unexpected arguments"},
		{"subscription without topic", []string{"--subscriptions", "replay"}, `"replay" is not sub=topic`},
		{"empty project", []string{"--project", ""}, "--project is empty"},
		{"address in use", []string{"--addr", busy.Addr().String()}, "address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseFlagsDefaults(t *testing.T) {
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := config{addr: "127.0.0.1:8085", project: "beamthrottle-local"}
	if diff := cmp.Diff(want, c, cmp.AllowUnexported(config{}, subscription{})); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
