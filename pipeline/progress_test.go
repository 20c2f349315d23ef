package pipeline

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/prismsplit"
	"github.com/beamthrottle/beamthrottle/internal/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

// TestProgressCountsEachOutputOnce runs pipelines whose elements reach every
// output by every path (payload checks, the throttle, malformed and parked
// dead letters) and checks that the progress counts, the summary and the
// output files agree: each element is counted once, in its own output.
func TestProgressCountsEachOutputOnce(t *testing.T) {
	big := `{"big":"` + strings.Repeat("x", 100) + `"}`
	tests := []struct {
		name  string
		setup func(t *testing.T, o *Options)
		want  map[string]int64
	}{
		{
			name: "payload checks and API errors",
			setup: func(t *testing.T, o *Options) {
				o.Input = writeInput(t, []string{`{"id":1}`, `{"id":2}`, `{"id":3}`, "not JSON", "{cut", big, big + " "})
				o.CallerOptions.URL = jsonAPI(t)
				o.MaxPayload = 100
				o.K = 1e9 // no client throttling
			},
			want: map[string]int64{OutSuccess: 3, OutErrors: 4},
		},
		{
			name: "jsonl check",
			setup: func(t *testing.T, o *Options) {
				o.Input = writeInput(t, []string{`{"id":1}`, "{cut", "plain"})
				o.InputFormat = "jsonl"
				o.Caller = "echo"
			},
			want: map[string]int64{OutSuccess: 1, OutErrors: 2},
		},
		{
			name: "throttled",
			setup: func(t *testing.T, o *Options) {
				o.Generate = 40
				o.Caller = "always429"
			},
			want: map[string]int64{}, // client and server throttled: 40 in all, split by the throttle
		},
		{
			name: "reprocess: parked, malformed, empty, success",
			setup: func(t *testing.T, o *Options) {
				ps := emulator(t, "dlq")
				var msgs []pubsubio.Message
				for i := range 3 {
					msgs = append(msgs, pubsubio.Message{Data: []byte(fmt.Sprintf("park-%d", i)), Attributes: map[string]string{AttrAttempts: "5"}})
				}
				msgs = append(msgs,
					pubsubio.Message{Data: []byte("bad-1"), Attributes: map[string]string{AttrAttempts: "many"}},
					pubsubio.Message{Data: []byte("bad-2"), Attributes: map[string]string{AttrAttempts: "-1"}},
					pubsubio.Message{Attributes: map[string]string{AttrAttempts: "1"}}, // empty payload
					pubsubio.Message{Data: []byte("ok-1"), Attributes: map[string]string{AttrAttempts: "1"}},
					pubsubio.Message{Data: []byte("ok-2")})
				if _, err := pubsubadmin.PublishMessages(context.Background(), project, "dlq", ps.Addr, msgs); err != nil {
					t.Fatal(err)
				}
				o.Reprocess = true
				o.Subscription = "dlq-sub"
				o.IdleTimeout = time.Second
				o.Caller = "echo"
				o.PubSubHost = ps.Addr
				o.MaxTotalAttempts = 5
			},
			want: map[string]int64{OutParked: 3, OutErrors: 3, OutSuccess: 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t)
			tc.setup(t, &o)
			p := NewProgress(nil, 0)
			if err := o.Validate(); err != nil {
				t.Fatalf("invalid options: %v", err)
			}
			sum, err := Run(context.Background(), o, p)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			progress := p.Counts()
			line := p.Line(-1)
			summary := map[string]int64{OutSuccess: sum.Success, OutClientThrottled: sum.ClientThrottled,
				OutServerThrottled: sum.ServerThrottled, OutErrors: sum.Errors, OutParked: sum.Parked}
			var total int64
			for _, name := range []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors, OutParked} {
				files := int64(len(readLines(t, o.OutputPrefix, name)))
				if progress[name] != summary[name] || files != summary[name] {
					t.Errorf("%s: progress %d, summary %d, file lines %d: want all equal", name, progress[name], summary[name], files)
				}
				if want, ok := tc.want[name]; ok && summary[name] != want {
					t.Errorf("%s: summary %d, want %d", name, summary[name], want)
				}
				if name != OutParked && !strings.Contains(line, fmt.Sprintf(" %s=%d", name, summary[name])) {
					t.Errorf("progress line %q: want %s=%d", line, name, summary[name])
				}
				total += progress[name]
			}
			if total != sum.Total() {
				t.Errorf("progress counts %d elements, summary %d", total, sum.Total())
			}
		})
	}
}

// TestProgressConcurrentRuns: two runs at once in one process (Prism runs
// both in it) count apart, each in its own Progress.
func TestProgressConcurrentRuns(t *testing.T) {
	prismsplit.Avoid() // before the runs: they then only read the flag
	tests := []struct {
		caller string
		n      int
	}{
		{"echo", 60},      // all success
		{"always429", 40}, // all client or server throttled
	}
	progress := make([]*Progress, len(tests))
	sums := make([]Summary, len(tests))
	errs := make([]error, len(tests))
	var wg sync.WaitGroup
	for i, tc := range tests {
		o := baseOptions(t)
		o.Generate, o.Caller = tc.n, tc.caller
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		progress[i] = NewProgress(nil, 0)
		wg.Go(func() { sums[i], errs[i] = Run(context.Background(), o, progress[i]) })
	}
	wg.Wait()
	for i, tc := range tests {
		if errs[i] != nil {
			t.Fatalf("%s run: %v", tc.caller, errs[i])
		}
		got := progress[i].Counts()
		want := map[string]int64{OutSuccess: sums[i].Success, OutClientThrottled: sums[i].ClientThrottled,
			OutServerThrottled: sums[i].ServerThrottled, OutErrors: sums[i].Errors, OutParked: sums[i].Parked}
		if !maps.Equal(got, want) {
			t.Errorf("%s run: progress %v, want the summary's %v", tc.caller, got, want)
		}
		if sums[i].Total() != int64(tc.n) {
			t.Errorf("%s run: summary accounts for %d elements, want %d", tc.caller, sums[i].Total(), tc.n)
		}
	}
	if s := progress[0].Counts()[OutSuccess]; s != int64(tests[0].n) {
		t.Errorf("echo run: %d successes, want %d", s, tests[0].n)
	}
	if s := progress[1].Counts()[OutSuccess]; s != 0 {
		t.Errorf("always429 run: %d successes, want 0", s)
	}
}
