package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/prismsplit"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestMain(m *testing.M) {
	RegisterCaller("always429", func(CallerOptions) (clientcall.Caller[[]byte, []byte], error) {
		return throttledCaller{}, nil
	})
	prismsplit.Avoid() // for the tests that run pipelines without Run
	ptest.MainWithDefault(m, "prism")
}

// throttledCaller answers 429 to everything.
type throttledCaller struct{}

func (throttledCaller) Call(context.Context, []byte) ([]byte, error) {
	return nil, &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true}
}

const project = "test-project"

// emulator starts an in-process pstest server with the given topics, each
// with a subscription named <topic>-sub.
func emulator(t *testing.T, topics ...string) *pstest.Server {
	t.Helper()
	srv := pstest.NewServerWithAddress("127.0.0.1:0")
	t.Cleanup(func() { stopEmulator(srv) })
	ctx := context.Background()
	for _, topic := range topics {
		if err := pubsubadmin.CreateTopic(ctx, project, topic, srv.Addr); err != nil {
			t.Fatal(err)
		}
		if err := pubsubadmin.CreateSubscription(ctx, project, topic, topic+"-sub", srv.Addr); err != nil {
			t.Fatal(err)
		}
	}
	return srv
}

var stopped sync.Map // *pstest.Server already closed

// stopEmulator closes srv once.
func stopEmulator(srv *pstest.Server) {
	if _, done := stopped.LoadOrStore(srv, true); !done {
		srv.Close()
	}
}

// baseOptions are fast throttle settings for tests.
func baseOptions(t *testing.T) Options {
	return Options{
		// The SRE mode routes at once what the backend refuses, which the
		// tests of outputs and dead letters rely on; the default (paced)
		// mode is tested by the throttle package and the load tests.
		Name: "test", Caller: "http", Project: project, Mode: "sre",
		Groups: 2, BatchSize: 50, BatchInterval: 50 * time.Millisecond, K: 2,
		Window: "fixed", ResetInterval: time.Minute, Strategy: "route",
		MaxAttempts: 3, MaxAge: time.Minute, CallTimeout: 5 * time.Second, CallsInFlight: 1,
		MaxTotalAttempts: defaultMaxTotalAttempts,
		OutputPrefix:     t.TempDir() + "/",
	}
}

func run(t *testing.T, o Options) Summary {
	t.Helper()
	sum, _ := runCounted(t, o)
	return sum
}

// runCounted is run, also returning the counts of the run's Monitor.
func runCounted(t *testing.T, o Options) (Summary, map[string]int64) {
	t.Helper()
	if err := o.Validate(); err != nil {
		t.Fatalf("invalid options: %v", err)
	}
	p := newCountingMonitor()
	sum, err := Run(context.Background(), o, p)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return sum, p.Counts()
}

// readLines reads all lines of <prefix><name>-*.jsonl.
func readLines(t *testing.T, prefix, name string) []map[string]any {
	t.Helper()
	files, err := filepath.Glob(prefix + name + "-*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: bad JSON line %q: %v", f, sc.Text(), err)
			}
			out = append(out, m)
		}
		fh.Close()
	}
	if tmp, _ := filepath.Glob(prefix + name + "-*.tmp"); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
	return out
}

// TestFilesInFilesOut: JSONL files in, four JSONL outputs out, against the
// quota server with a quota far below the offered load; the files hold
// every input line exactly once and agree with the summary.
func TestFilesInFilesOut(t *testing.T) {
	srv, err := testserver.NewServer(testserver.Config{Quota: 50, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	want := map[string]bool{}
	for f := range 3 {
		var b strings.Builder
		for i := range 200 {
			line := fmt.Sprintf(`{"file":%d,"line":%d}`, f, i)
			want[line] = true
			b.WriteString(line + "\n")
		}
		b.WriteString("\n") // blank lines are not records
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("in-%d.jsonl", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := baseOptions(t)
	o.Input = filepath.Join(dir, "in-*.jsonl")
	o.CallerOptions.URL = srv.Endpoint()
	sum := run(t, o)

	seen := map[string]int{}
	counts := map[string]int{}
	for _, name := range []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors} {
		for _, l := range readLines(t, o.OutputPrefix, name) {
			seen[l["input"].(string)]++
			counts[name]++
			if name == OutSuccess && l["response"] == nil {
				t.Errorf("success line without response: %v", l)
			}
			if name == OutServerThrottled && l["error"] != "Server returned HTTP response code: 429" {
				t.Errorf("server throttled line error = %v", l["error"])
			}
			if name == OutClientThrottled && !strings.HasPrefix(l["error"].(string), "Throttled by Client. Request rejection probability: ") {
				t.Errorf("client throttled line error = %v", l["error"])
			}
		}
	}
	for line := range want {
		if seen[line] != 1 {
			t.Errorf("input %s seen %d times in the outputs, want 1", line, seen[line])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("outputs hold %d distinct inputs, want %d", len(seen), len(want))
	}
	for name, n := range map[string]int64{OutSuccess: sum.Success, OutClientThrottled: sum.ClientThrottled,
		OutServerThrottled: sum.ServerThrottled, OutErrors: sum.Errors} {
		if int64(counts[name]) != n {
			t.Errorf("%s: summary says %d, files hold %d", name, n, counts[name])
		}
	}
	if counts[OutServerThrottled] == 0 || counts[OutSuccess] == 0 {
		t.Errorf("want successes and server throttles at 12x the quota, got %v", counts)
	}
}

// TestDeadLetterAttributes: throttled records are published to the
// dead-letter topic, message by message with the original payload as data
// and the documented attributes.
func TestDeadLetterAttributes(t *testing.T) {
	ps := emulator(t, "dlq")
	const n = 300
	o := baseOptions(t)
	o.Generate = n
	o.Caller = "always429"
	o.DeadLetterTopic = "dlq"
	o.PubSubHost = ps.Addr
	sum := run(t, o)
	if sum.Total() != n || sum.Success != 0 || sum.ClientThrottled == 0 || sum.ServerThrottled == 0 {
		t.Fatalf("summary %+v, want %d throttled (client and server)", sum, n)
	}
	msgs, err := pubsubadmin.Drain(context.Background(), project, "dlq-sub", ps.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != n {
		t.Fatalf("dead-letter topic holds %d messages, want %d", len(msgs), n)
	}
	byOutcome := map[string]int{}
	payloads := map[string]bool{}
	for _, m := range msgs {
		a := m.Attributes
		var e struct{ ID int }
		if err := json.Unmarshal(m.Data, &e); err != nil || !strings.HasPrefix(string(m.Data), `{"id":`) {
			t.Errorf("data %q is not the original payload", m.Data)
		}
		payloads[string(m.Data)] = true
		byOutcome[a[AttrOutcome]]++
		if a[AttrAttempts] != "1" || a[AttrPipeline] != "test" || a[AttrGroup] == "" || a[AttrFirst] == "" || a[AttrLast] == "" {
			t.Errorf("attributes %v: want attempts 1, pipeline test, group and times", a)
		}
		p, err := strconv.ParseFloat(a[AttrProbability], 64)
		if err != nil || p < 0 || p > 1 {
			t.Errorf("rejection_probability %q not in [0,1]", a[AttrProbability])
		}
		switch a[AttrOutcome] {
		case "server_throttled":
			if a[AttrStatusCode] != "429" || a[AttrError] != "Server returned HTTP response code: 429" {
				t.Errorf("server throttled attributes %v", a)
			}
		case "client_throttled":
			if !strings.HasPrefix(a[AttrError], "Throttled by Client") || p == 0 {
				t.Errorf("client throttled attributes %v", a)
			}
		default:
			t.Errorf("outcome %q", a[AttrOutcome])
		}
		if len(a) > pubsubio.MaxAttributes {
			t.Errorf("%d attributes", len(a))
		}
	}
	if len(payloads) != n {
		t.Errorf("%d distinct payloads, want %d", len(payloads), n)
	}
	if int64(byOutcome["server_throttled"]) != sum.ServerThrottled || int64(byOutcome["client_throttled"]) != sum.ClientThrottled {
		t.Errorf("dead letters by outcome %v, summary %+v", byOutcome, sum)
	}
}

// TestReprocessRoundTrip: a first run against a low quota sends its
// throttled elements to the dead-letter topic; the quota is raised; a
// reprocessing run drains the dead-letter subscription. Every original
// element is accounted for exactly once across both runs.
func TestReprocessRoundTrip(t *testing.T) {
	ps := emulator(t, "dlq", "dlq-again")
	srv, err := testserver.NewServer(testserver.Config{Quota: 20, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const n = 600
	o := baseOptions(t)
	o.Generate = n
	o.CallerOptions.URL = srv.Endpoint()
	o.DeadLetterTopic = "dlq"
	o.PubSubHost = ps.Addr
	first := run(t, o)
	dead := first.ClientThrottled + first.ServerThrottled
	if first.Total() != n || dead == 0 {
		t.Fatalf("first run %+v: want %d in total, some dead letters", first, n)
	}

	srv.Handler.SetQuota(100000, time.Second)
	r := baseOptions(t)
	r.Reprocess = true
	r.Subscription = "dlq-sub"
	r.IdleTimeout = time.Second
	r.CallerOptions.URL = srv.Endpoint()
	r.DeadLetterTopic = "dlq-again" // throttled again: kept for a later run
	r.PubSubHost = ps.Addr
	second := run(t, r)
	if second.Reprocessed != dead {
		t.Errorf("reprocessed %d messages, want the %d dead letters", second.Reprocessed, dead)
	}
	if second.Total() != dead {
		t.Errorf("second run accounts for %d, want %d (%+v)", second.Total(), dead, second)
	}
	if first.Success+first.Errors+second.Total() != n {
		t.Errorf("across runs: %d + %d + %d != %d", first.Success, first.Errors, second.Total(), n)
	}
	if second.Success == 0 {
		t.Errorf("no success after the quota was raised: %+v", second)
	}
	// Every success line of the second run is an original payload with its
	// original message's attempts carried forward.
	for _, l := range readLines(t, r.OutputPrefix, OutSuccess) {
		if !strings.HasPrefix(l["input"].(string), `{"id":`) {
			t.Errorf("reprocessed input %v is not the original payload", l["input"])
		}
	}
	left, err := pubsubadmin.Drain(context.Background(), project, "dlq-sub", ps.Addr)
	if err != nil || len(left) != 0 {
		t.Errorf("dead-letter subscription not drained: %d left, %v", len(left), err)
	}
	again, err := pubsubadmin.Drain(context.Background(), project, "dlq-again-sub", ps.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(again)) != second.ClientThrottled+second.ServerThrottled {
		t.Errorf("%d throttled again on the topic, summary %+v", len(again), second)
	}
	for _, m := range again {
		if m.Attributes[AttrAttempts] != "2" {
			t.Errorf("throttled again with attempts %q, want 2", m.Attributes[AttrAttempts])
		}
	}
}

// TestReprocessParksAndRejectsMalformed: messages whose attempts reached
// --max_total_attempts are parked with all their attributes and never
// called; a malformed attempts attribute goes to errors.
func TestReprocessParksAndRejectsMalformed(t *testing.T) {
	ps := emulator(t, "dlq")
	var msgs []pubsubio.Message
	for i := range 10 {
		msgs = append(msgs, pubsubio.Message{Data: []byte(fmt.Sprintf("park-%d", i)), Attributes: map[string]string{AttrAttempts: "5", "custom": "kept"}})
	}
	msgs = append(msgs,
		pubsubio.Message{Data: []byte("retry-me"), Attributes: map[string]string{AttrAttempts: "2"}},
		pubsubio.Message{Data: []byte("bad-attempts"), Attributes: map[string]string{AttrAttempts: "many"}})
	if _, err := pubsubadmin.PublishMessages(context.Background(), project, "dlq", ps.Addr, msgs); err != nil {
		t.Fatal(err)
	}
	o := baseOptions(t)
	o.Reprocess = true
	o.Subscription = "dlq-sub"
	o.IdleTimeout = time.Second
	o.Caller = "echo"
	o.PubSubHost = ps.Addr
	o.MaxTotalAttempts = 5
	sum := run(t, o)
	if sum.Parked != 10 || sum.Success != 1 || sum.Errors != 1 || sum.Reprocessed != 12 || sum.Total() != 12 {
		t.Errorf("summary %+v: want 10 parked, 1 success, 1 error of 12", sum)
	}
	parked := readLines(t, o.OutputPrefix, OutParked)
	if len(parked) != 10 {
		t.Fatalf("%d parked lines, want 10", len(parked))
	}
	for _, l := range parked {
		attrs, _ := l["attributes"].(map[string]any)
		if !strings.HasPrefix(l["input"].(string), "park-") || attrs["custom"] != "kept" || l["attempts"] != 5.0 {
			t.Errorf("parked line %v", l)
		}
	}
	errs := readLines(t, o.OutputPrefix, OutErrors)
	if len(errs) != 1 || errs[0]["input"] != "bad-attempts" || !strings.Contains(errs[0]["error"].(string), `malformed "attempts" attribute "many"`) {
		t.Errorf("error lines %v", errs)
	}
	ok := readLines(t, o.OutputPrefix, OutSuccess)
	if len(ok) != 1 || ok[0]["input"] != "retry-me" {
		t.Errorf("success lines %v", ok)
	}
}

// TestPublishFailureFailsRun: with the emulator down, publishing dead
// letters fails the bundle and so the run, with a clear error; nothing is
// reported as done.
func TestPublishFailureFailsRun(t *testing.T) {
	ps := emulator(t, "dlq")
	addr := ps.Addr
	stopEmulator(ps)
	o := baseOptions(t)
	o.Generate = 20
	o.Caller = "always429"
	o.DeadLetterTopic = "dlq"
	o.PubSubHost = addr
	o.PublishTimeout = 2 * time.Second
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), o, nil)
	if err == nil {
		t.Fatal("run succeeded with the Pub/Sub emulator stopped")
	}
	if !strings.Contains(err.Error(), "not published to projects/test-project/topics/dlq") {
		t.Errorf("error does not say what failed: %v", err)
	}
}

// TestOversizePayloadToErrorFile: a payload over Pub/Sub's 10 MB limit
// cannot be dead-lettered; it is written to the errors files with a clear
// message instead of failing the job forever, and only there: every
// element is in exactly one output, in the files and in the summary.
func TestOversizePayloadToErrorFile(t *testing.T) {
	ps := emulator(t, "dlq")
	dir := t.TempDir()
	big := `{"big":"` + strings.Repeat("x", pubsubio.MaxMessageBytes) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(big+"\n"+`{"small":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := baseOptions(t)
	o.Input = filepath.Join(dir, "in.jsonl")
	o.Caller = "always429"
	o.DeadLetterTopic = "dlq"
	o.PubSubHost = ps.Addr
	sum, progress := runCounted(t, o)
	if sum.DeadLetterRejected != 1 || sum.Errors != 1 || sum.ClientThrottled+sum.ServerThrottled != 1 || sum.Total() != 2 {
		t.Errorf("summary %+v: want 1 refused by Pub/Sub and counted as an error, 1 throttled", sum)
	}
	if progress[OutErrors] != 1 || progress[OutClientThrottled]+progress[OutServerThrottled] != 1 {
		t.Errorf("progress %v: want 1 error and 1 throttled", progress)
	}
	errs := readLines(t, o.OutputPrefix, OutErrors)
	if len(errs) != 1 || len(errs[0]["input"].(string)) != len(big) || !strings.Contains(errs[0]["error"].(string), "cannot publish to the dead-letter topic: pubsubio: message too large") {
		t.Errorf("%d error lines; want the big payload with a clear message", len(errs))
	}
	throttled := append(readLines(t, o.OutputPrefix, OutClientThrottled), readLines(t, o.OutputPrefix, OutServerThrottled)...)
	if len(throttled) != 1 || throttled[0]["input"] != `{"small":1}` {
		t.Errorf("%d throttled lines; want only the small payload's", len(throttled))
	}
	msgs, err := pubsubadmin.Drain(context.Background(), project, "dlq-sub", ps.Addr)
	if err != nil || len(msgs) != 1 || string(msgs[0].Data) != `{"small":1}` {
		t.Errorf("dead-letter topic: %d messages, %v; want only the small one", len(msgs), err)
	}
}

// TestUniversalRunner starts a standalone Prism job server on a loopback
// port and runs the pipeline through --runner=universal --endpoint=..., the
// path Flink and Spark job servers use.
func TestUniversalRunner(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port}); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{
		"runner": "universal", "endpoint": fmt.Sprintf("localhost:%d", port), "environment_type": "loopback",
	} {
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(name, old) })
	}
	o := baseOptions(t)
	o.Generate = 500
	o.Caller = "echo"
	sum := run(t, o)
	if sum.Success != 500 || sum.Total() != 500 {
		t.Errorf("summary %+v, want 500 successes", sum)
	}
	if got := len(readLines(t, o.OutputPrefix, OutSuccess)); got != 500 {
		t.Errorf("%d success lines, want 500", got)
	}
}
