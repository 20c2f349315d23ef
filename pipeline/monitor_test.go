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
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

// TestMonitorCountsEachOutputOnce runs pipelines whose elements reach every
// output by every path (payload checks, the throttle, malformed and parked
// dead letters) and checks that the Monitor's counts, the summary and the
// output files agree: each element is counted once, in its own output.
func TestMonitorCountsEachOutputOnce(t *testing.T) {
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
			p := newCountingMonitor()
			if err := o.Validate(); err != nil {
				t.Fatalf("invalid options: %v", err)
			}
			sum, err := Run(context.Background(), o, p)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			progress := p.Counts()
			summary := map[string]int64{OutSuccess: sum.Success, OutClientThrottled: sum.ClientThrottled,
				OutServerThrottled: sum.ServerThrottled, OutErrors: sum.Errors, OutParked: sum.Parked}
			var total int64
			for _, name := range []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors, OutParked} {
				files := int64(len(readLines(t, o.OutputPrefix, name)))
				if progress[name] != summary[name] || files != summary[name] {
					t.Errorf("%s: monitor %d, summary %d, file lines %d: want all equal", name, progress[name], summary[name], files)
				}
				if want, ok := tc.want[name]; ok && summary[name] != want {
					t.Errorf("%s: summary %d, want %d", name, summary[name], want)
				}
				total += progress[name]
			}
			if total != sum.Total() {
				t.Errorf("monitor counts %d elements, summary %d", total, sum.Total())
			}
		})
	}
}

// TestMonitorConcurrentRuns: two runs at once in one process (Prism runs
// both in it) count apart, each in its own Monitor.
func TestMonitorConcurrentRuns(t *testing.T) {
	prismsplit.Avoid() // before the runs: they then only read the flag
	tests := []struct {
		caller string
		n      int
	}{
		{"echo", 60},      // all success
		{"always429", 40}, // all client or server throttled
	}
	progress := make([]*countingMonitor, len(tests))
	sums := make([]Summary, len(tests))
	errs := make([]error, len(tests))
	var wg sync.WaitGroup
	for i, tc := range tests {
		o := baseOptions(t)
		o.Generate, o.Caller = tc.n, tc.caller
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		progress[i] = newCountingMonitor()
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
			t.Errorf("%s run: monitor %v, want the summary's %v", tc.caller, got, want)
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

// countingMonitor is the Monitor of the tests: it counts what a run tells
// it, as cmd/beamthrottle's progress line does, and keeps what its calls
// heard.
type countingMonitor struct {
	mu                sync.Mutex
	starts            int
	maxWait, maxStall time.Duration
	counts            map[string]int64
	calls             int
	lastErr           error           // of the last call; nil if it was accepted
	errTexts          map[string]bool // every call error's text
}

func newCountingMonitor() *countingMonitor {
	return &countingMonitor{counts: map[string]int64{}, errTexts: map[string]bool{}}
}

func (m *countingMonitor) Start(maxWait, maxStall time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.starts++
	m.maxWait, m.maxStall = maxWait, maxStall
	clear(m.counts)
}

func (m *countingMonitor) Written(output string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[output] += n
}

func (m *countingMonitor) Called(_ time.Time, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	m.lastErr = err
	if err != nil {
		m.errTexts[err.Error()] = true
	}
}

// Counts returns the elements written per output, every output present.
func (m *countingMonitor) Counts() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int64{}
	for _, name := range []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors, OutParked} {
		out[name] = m.counts[name]
	}
	return out
}

// lastCall returns the number of calls and the error of the last (nil if
// it was accepted or there was none).
func (m *countingMonitor) lastCall() (calls int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls, m.lastErr
}
