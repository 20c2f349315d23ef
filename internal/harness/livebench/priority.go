package livebench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamthrottle/beamthrottle/internal/report"
	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// The priority runs' Pub/Sub names, on an in-process emulator (pstest).
const (
	priorityProject = "beamthrottle-livebench"
	priorityTopic   = "priority"
	prioritySub     = "priority-sub"
	// priorityIdle is the pipeline's --idle_timeout: its read ends this
	// long after the source's last message.
	priorityIdle = 5 * time.Second
	// priorityTick is how often the source publishes its next
	// rate × priorityTick elements.
	priorityTick = 100 * time.Millisecond
	// warmupTimeout bounds the wait for the pipeline's first call.
	warmupTimeout = 2 * time.Minute
)

// runPriority runs a priority scenario: a source publishing to a Pub/Sub
// subscription at sc.rate, every sc.highEvery-th element high and the
// others low, read by the pipeline with --priority=sc.priorityFlag. It measures
// each element's wait from its publication to the server's receipt of the
// call that was accepted, and each tier's outcomes from the output files.
//
// The source starts once the pipeline is up: a warm-up message (not
// measured) is published first, and the timed elements follow as soon as
// the server has received its call, so that none waits for Prism's start.
func runPriority(ctx context.Context, sc scenario, mode string, srv *testserver.Server, set Settings) (Result, error) {
	ps := pstest.NewServerWithAddress("127.0.0.1:0")
	defer ps.Close()
	if err := pubsubadmin.CreateTopic(ctx, priorityProject, priorityTopic, ps.Addr); err != nil {
		return Result{}, err
	}
	if err := pubsubadmin.CreateSubscription(ctx, priorityProject, priorityTopic, prioritySub, ps.Addr); err != nil {
		return Result{}, err
	}
	tp := &tap{next: srv.Handler, accepted: map[int]time.Time{}}
	front, err := serve(tp)
	if err != nil {
		return Result{}, err
	}
	defer front.Close()

	d := sc.runFor(set.Duration)
	source := []string{"--subscription=" + prioritySub, "--pubsub_emulator=" + ps.Addr,
		"--pubsub_project=" + priorityProject, fmt.Sprintf("--idle_timeout=%v", priorityIdle)}
	if sc.priorityFlag != "" {
		source = append(source, "--priority="+sc.priorityFlag)
	}
	o, err := options(sc, mode, front.url+"/api", source)
	if err != nil {
		return Result{}, err
	}
	o.FreshSubscription = true // made here: no earlier run holds its messages

	p := report.NewProgress(nil, 0)
	stopReports := reportClientThrottled(srv, p)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() {
		_, err := pipeline.Run(runCtx, o, p)
		runErr <- err
	}()
	topic := "projects/" + priorityProject + "/topics/" + priorityTopic
	ps.Publish(topic, tierPayload(-1, "normal"), nil)
	sent, err := publishTiers(ctx, sc, d, topic, ps, tp, runErr)
	if err != nil {
		cancel() // the source stopped early: stop the pipeline too, and wait for it
	}
	err = errors.Join(err, <-runErr)
	stopReports()
	if err != nil {
		return Result{}, err
	}

	outs, err := readOutputs(o.OutputPrefix)
	if err != nil {
		return Result{}, err
	}
	tr := tierRun{sent: sent, accepted: tp.acceptedTimes(), outputs: outs}
	st := srv.Handler.Stats()
	r := Result{
		Accepted: st.Accepted, Rejected: st.Rejected, Errors: st.Errors,
		Waste:           wasteOf(st.Accepted, st.Rejected),
		ClientThrottled: int64(len(outs[pipeline.OutClientThrottled])),
		Duration:        d.String(),
		Tiers:           tr.measure(pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled, pipeline.OutErrors),
	}
	return r, nil
}

// errPipelineEnded says that the pipeline ended before the source did.
var errPipelineEnded = errors.New("the pipeline ended before its source")

// publishTiers waits for the warm-up's call to reach the server, then
// publishes sc.rate × d elements at sc.rate, rate × priorityTick at a time,
// and returns them by sequence number. It stops early with ctx's error, or
// with errPipelineEnded if the pipeline ends first (its error is then put
// back in runErr).
func publishTiers(ctx context.Context, sc scenario, d time.Duration, topic string, ps *pstest.Server, tp *tap, runErr chan error) ([]sentElement, error) {
	deadline := time.Now().Add(warmupTimeout)
	for !tp.seen() {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no call reached the server within %v of the start", warmupTimeout)
		}
		if err := pause(ctx, 50*time.Millisecond, runErr); err != nil {
			return nil, err
		}
	}
	n := int(sc.rate * d.Seconds())
	perTick := max(1, int(sc.rate*priorityTick.Seconds()+0.5))
	sent := make([]sentElement, 0, n)
	start := time.Now()
	for k := 0; len(sent) < n; k++ {
		if err := pause(ctx, time.Until(start.Add(time.Duration(k)*priorityTick)), runErr); err != nil {
			return nil, err
		}
		for range min(perTick, n-len(sent)) {
			seq := len(sent)
			t := tierOfSeq(seq, sc.highEvery)
			at := time.Now()
			ps.Publish(topic, tierPayload(seq, t), nil)
			sent = append(sent, sentElement{tier: t, at: at})
		}
	}
	return sent, nil
}

// pause waits d, and returns ctx's error if it ends first, or
// errPipelineEnded if the pipeline does (its error is put back in runErr).
func pause(ctx context.Context, d time.Duration, runErr chan error) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-runErr:
		runErr <- err
		return errPipelineEnded
	case <-time.After(d):
		return nil
	}
}

// tap is an http.Handler in front of the quota server's: it records when
// the server received the first call it accepted (answered 200) of each
// element, by the sequence number in its payload. It is safe for
// concurrent use.
type tap struct {
	next http.Handler

	mu       sync.Mutex
	any      bool // a call was received
	accepted map[int]time.Time
}

func (t *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/api") {
		t.next.ServeHTTP(w, r)
		return
	}
	at := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "livebench: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	t.next.ServeHTTP(sw, r)
	seq, ok := seqOf(body)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.any = true
	if _, seen := t.accepted[seq]; ok && sw.status == http.StatusOK && !seen {
		t.accepted[seq] = at
	}
}

// seen reports whether a call has been received.
func (t *tap) seen() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.any
}

// acceptedTimes returns a copy of the receipt times of accepted calls.
func (t *tap) acceptedTimes() map[int]time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[int]time.Time, len(t.accepted))
	for k, v := range t.accepted {
		out[k] = v
	}
	return out
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// front is an HTTP server on a loopback port.
type front struct {
	url string
	srv *http.Server
}

// serve serves h on 127.0.0.1 on a free port.
func serve(h http.Handler) (*front, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &front{url: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go f.srv.Serve(ln)
	return f, nil
}

// Close stops the server, waiting for requests in flight.
func (f *front) Close() { f.srv.Shutdown(context.Background()) }

// readOutputs reads the pipeline's output files under prefix and returns
// the sequence numbers of the inputs in each output, by output name.
func readOutputs(prefix string) (map[string]map[int]bool, error) {
	out := map[string]map[int]bool{}
	for _, name := range []string{pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled, pipeline.OutErrors} {
		files, err := filepath.Glob(prefix + name + "-*.jsonl")
		if err != nil {
			return nil, err
		}
		out[name] = map[int]bool{}
		for _, f := range files {
			if err := readSeqs(f, out[name]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// readSeqs adds to seqs the sequence number in the input of each line of
// the output file at path.
func readSeqs(path string, seqs map[int]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		seq, ok := inputSeq(sc.Bytes())
		if ok {
			seqs[seq] = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// inputSeq is the sequence number in the input of an output line (a JSON
// object whose "input" holds the payload as a string), and whether it has
// one.
func inputSeq(line []byte) (int, bool) {
	var l struct {
		Input    string `json:"input"`
		Encoding string `json:"input_encoding"`
	}
	if json.Unmarshal(line, &l) != nil || l.Encoding != "" {
		return 0, false
	}
	return seqOf([]byte(l.Input))
}
