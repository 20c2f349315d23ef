package quotabench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// The priority scenarios' source: Pub/Sub on an in-process emulator
// (pstest), one topic and subscription per process, named after its tier.
const (
	tierProject = "quotabench"
	// tierIdle is the processes' --idle_timeout: a process's read ends
	// this long after its last message. It covers the wait from the first
	// process's warm-up to the last one's first call, so that no process
	// stops before the timed elements come.
	tierIdle = 15 * time.Second
	// tierWarmup bounds the wait for every process's first call.
	tierWarmup = 2 * time.Minute
	// tierField is the payload's field that names its tier (--priority).
	tierField = "tier"
)

// tierSource is the source of a priority scenario's processes: it
// publishes to each process's subscription elements all of its tier.
type tierSource struct {
	ps    *pstest.Server
	tiers []string
}

// startTierSource starts a Pub/Sub emulator with a topic and a
// subscription for each tier.
func startTierSource(ctx context.Context, tiers []string) (*tierSource, error) {
	s := &tierSource{ps: pstest.NewServerWithAddress("127.0.0.1:0"), tiers: tiers}
	for _, t := range tiers {
		if err := pubsubadmin.CreateTopic(ctx, tierProject, t, s.ps.Addr); err != nil {
			s.Close()
			return nil, err
		}
		if err := pubsubadmin.CreateSubscription(ctx, tierProject, t, t+"-sub", s.ps.Addr); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close stops the emulator.
func (s *tierSource) Close() { s.ps.Close() }

// flags are the source flags of the process of tier (see tierFlags).
func (s *tierSource) flags(tier string) []string { return tierFlags(tier, s.ps.Addr) }

// tierFlags are the source flags of the process of tier, on the emulator
// at addr: its subscription, drained (--idle_timeout), and the priority
// read from the payload.
func tierFlags(tier, addr string) []string {
	return []string{
		"--subscription=" + tier + "-sub",
		"--pubsub_emulator=" + addr,
		"--pubsub_project=" + tierProject,
		"--idle_timeout=" + tierIdle.String(),
		"--priority=json:" + tierField,
	}
}

// tierPayload is the payload of element seq of a tier's process:
// {"seq":N,"tier":"high"}, unique within the process.
func tierPayload(seq int, tier string) []byte {
	b, _ := json.Marshal(struct {
		Seq  int    `json:"seq"`
		Tier string `json:"tier"`
	}{seq, tier})
	return b
}

// sent is what a tierSource published: per tier, in the order of its
// tiers, the elements, and when its first and last timed elements went.
type sent struct {
	offered     []int
	first, last time.Time
}

// run publishes a warm-up element (seq -1) to each process, waits until
// every process (named after its tier) has called h, then publishes n
// elements to each at rate per second, the i-th of every process at once,
// i/rate after the first. It stops early with an error when ctx is done,
// when done is closed (a process ended) or when a process has not called
// within tierWarmup; what it published until then is in the result.
func (s *tierSource) run(ctx context.Context, h *testserver.Handler, n int, rate float64, done <-chan struct{}) (sent, error) {
	out := sent{offered: make([]int, len(s.tiers))}
	publish := func(seq int) {
		for i, t := range s.tiers {
			s.ps.Publish("projects/"+tierProject+"/topics/"+t, tierPayload(seq, t), nil)
			out.offered[i]++
		}
	}
	wait := func(d time.Duration) error {
		if d <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return errors.New("a process ended before the source did")
		case <-time.After(d):
			return nil
		}
	}

	publish(-1)
	deadline := time.Now().Add(tierWarmup)
	for !allCalling(h.Stats(), s.tiers) {
		if time.Now().After(deadline) {
			return out, fmt.Errorf("a process did not call the server within %v of its warm-up", tierWarmup)
		}
		if err := wait(50 * time.Millisecond); err != nil {
			return out, err
		}
	}
	start := time.Now()
	for i := range n {
		if err := wait(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second))))); err != nil {
			return out, err
		}
		out.last = time.Now()
		if i == 0 {
			out.first = out.last
		}
		publish(i)
	}
	return out, nil
}
