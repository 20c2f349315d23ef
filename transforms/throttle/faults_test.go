package throttle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Fault tests: the transform against backends that fail in every way, and
// callers that panic or hang. Each asserts conservation: every input element
// is in exactly one output.

func init() {
	beam.RegisterType(reflect.TypeOf((*panicCaller)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*panicKey)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*stuckCaller)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*phasedHTTP)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*reading)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*readingCaller)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*strictCaller)(nil)).Elem())
	register.DoFn2x0[Record, func(string)](&recordCheck{})
	register.Function1x1[Record, string](recordJSONLine)
}

// outputInputs flattens the inputs found in the four outputs into one
// PCollection<string>: the Success responses (every caller of these tests
// echoes its input on success) and the Records' inputs. passert.Equals on it
// checks conservation: every input exactly once, nothing invented.
func outputInputs(s beam.Scope, out Outputs) beam.PCollection {
	return beam.Flatten(s,
		beam.ParDo(s, bytesToString, out.Success),
		beam.ParDo(s, recordInput, out.ClientThrottled),
		beam.ParDo(s, recordInput, out.ServerThrottled),
		beam.ParDo(s, recordInput, out.Errors))
}

// inputsOf returns the payloads of generate(s, n) whose last digit is in
// digits, as passert values.
func inputsOf(n int, digits string) []any {
	var out []any
	for i := range n {
		e := fmt.Sprintf("e%07d", i)
		if strings.IndexByte(digits, e[len(e)-1]) >= 0 {
			out = append(out, e)
		}
	}
	return out
}

const allDigits = "0123456789"

// recordCheck emits a description of every Record that is not as wanted;
// passert.Empty on its output shows the offending records.
type recordCheck struct {
	Outcome Outcome
	// Contains maps the last character of a record's input to a text its
	// Error must contain; the key "*" applies to every input.
	Contains map[string]string
	// Status is the wanted StatusCode, or -1 for any.
	Status int
}

func (c *recordCheck) ProcessElement(r Record, emit func(string)) {
	var bad []string
	if r.Outcome != c.Outcome {
		bad = append(bad, fmt.Sprintf("outcome %q, want %q", r.Outcome, c.Outcome))
	}
	if c.Status >= 0 && r.StatusCode != c.Status {
		bad = append(bad, fmt.Sprintf("status %d, want %d", r.StatusCode, c.Status))
	}
	if len(r.Input) > 0 {
		for _, key := range []string{"*", string(r.Input[len(r.Input)-1:])} {
			if want, ok := c.Contains[key]; ok && !strings.Contains(r.Error, want) {
				bad = append(bad, fmt.Sprintf("error %q does not contain %q", r.Error, want))
			}
		}
	}
	if r.FirstAttempt == 0 || r.LastAttempt < r.FirstAttempt {
		bad = append(bad, fmt.Sprintf("first attempt %d, last %d", r.FirstAttempt, r.LastAttempt))
	}
	if len(bad) > 0 {
		emit(fmt.Sprintf("record for %q: %s", r.Input, strings.Join(bad, "; ")))
	}
}

// checkRecords asserts that every Record of records passes c.
func checkRecords(s beam.Scope, records beam.PCollection, c *recordCheck) {
	passert.Empty(s, beam.ParDo(s, c, records))
}

// outcomeMetrics reads the outcome counters of a run.
func outcomeMetrics(t *testing.T, res beam.PipelineResult) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for _, m := range []string{metricAccepted, metricCacheHits, metricClientThrottled, metricServerThrottled, metricErrors, metricDropped} {
		got[m] = counter(t, res, m)
	}
	return got
}

// sumOutcomes adds up the outcome counters: the elements accounted for.
func sumOutcomes(m map[string]int64) int64 {
	return m[metricAccepted] + m[metricCacheHits] + m[metricClientThrottled] + m[metricServerThrottled] + m[metricErrors] + m[metricDropped]
}

// TestFaultSlowBackend: a backend slower than the per-call timeout. Whether
// the throttle's call timeout or the HTTP caller's own timeout fires first,
// every element goes to Errors with a message saying it timed out, and the
// slow backend does not stall the pipeline.
func TestFaultSlowBackend(t *testing.T) {
	tests := []struct {
		name        string
		callTimeout time.Duration // throttle.WithCallTimeout
		httpTimeout time.Duration // clientcall.HTTP.Timeout
		want        string
	}{
		{"throttle call timeout", 100 * time.Millisecond, 0, "throttle: call did not return within the 100ms timeout"},
		{"HTTP caller timeout", 5 * time.Second, 100 * time.Millisecond, ": timeout after 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const n = 20
			srv, err := testserver.NewServer(testserver.Config{Latency: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, s := beam.NewPipelineWithRoot()
			out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.Endpoint(), Timeout: tc.httpTimeout},
				WithGroups(2), WithCallsInFlight(10), WithCallTimeout(tc.callTimeout), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
			passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
			passert.Count(s, out.Errors, "errors", n)
			checkRecords(s, out.Errors, &recordCheck{Outcome: OutcomeError, Status: 0, Contains: map[string]string{"*": tc.want}})
			start := time.Now()
			res := runPipeline(t, p, true)
			if got := outcomeMetrics(t, res); got[metricErrors] != n || sumOutcomes(got) != n {
				t.Errorf("got metrics %v, want %d errors and nothing else", got, n)
			}
			// Up to 10 calls in flight per group: a timeout per wave, not
			// per element, and never the backend's minute.
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("run took %v: the slow backend stalled it", d)
			}
		})
	}
}

// TestFaultServerErrors: the quota server answers 500 to 30 % of the calls
// (seeded). Every 500 is an Errors record with the status and the server's
// message, every other call a success; the outputs match the server's own
// counts and the error share is close to 30 %.
func TestFaultServerErrors(t *testing.T) {
	const n = 1000
	srv, err := testserver.NewServer(testserver.Config{ErrorRate: 0.3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.Endpoint()}, WithGroups(2), WithBatchSize(200), WithSeed(3))
	passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
	passert.Empty(s, out.ServerThrottled)
	passert.Empty(s, out.ClientThrottled)
	checkRecords(s, out.Errors, &recordCheck{Outcome: OutcomeError, Status: http.StatusInternalServerError,
		Contains: map[string]string{"*": "HTTP 500 Internal Server Error: testserver: injected error"}})
	res := runPipeline(t, p, true)

	st := srv.Handler.Stats()
	got := outcomeMetrics(t, res)
	if got[metricErrors] != st.Errors || got[metricAccepted] != st.Accepted || sumOutcomes(got) != n {
		t.Errorf("got metrics %v, server %d accepted %d errors; want them equal, adding up to %d", got, st.Accepted, st.Errors, n)
	}
	if share := float64(st.Errors) / n; share < 0.25 || share > 0.35 {
		t.Errorf("got %.1f%% errors, want about 30%%", 100*share)
	}
}

// TestFaultConnectionsClosed: a backend that closes the connection without
// answering (hijack and close) for payloads ending in 3 or 7. Those elements,
// and only those, go to Errors saying the server closed the connection; the
// HTTP caller does not re-send them (a POST is not replayable), so the server
// sees each element once.
func TestFaultConnectionsClosed(t *testing.T) {
	const n = 200
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[string(body)]++
		mu.Unlock()
		if d := body[len(body)-1]; d == '3' || d == '7' {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.URL}, WithGroups(2), WithCallsInFlight(4), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
	passert.Equals(s, beam.ParDo(s, recordInput, out.Errors), inputsOf(n, "37")...)
	checkRecords(s, out.Errors, &recordCheck{Outcome: OutcomeError, Status: 0, Contains: map[string]string{"*": "connection closed by server: EOF"}})
	runPipeline(t, p, true)
	mu.Lock()
	defer mu.Unlock()
	for e, c := range seen {
		if c != 1 {
			t.Errorf("server saw %s %d times, want once", e, c)
		}
	}
	if len(seen) != n {
		t.Errorf("server saw %d distinct payloads, want %d", len(seen), n)
	}
}

// phasedHTTP is the HTTP caller reporting each call's error to the running
// test's serverPhases, so the test can take its server down and bring it back
// after counted calls rather than after some wall-clock time. (Prism runs the
// workers in this process, so the package variable is shared.)
type phasedHTTP struct {
	HTTP *clientcall.HTTP
}

func (c *phasedHTTP) Setup(ctx context.Context) error    { return c.HTTP.Setup(ctx) }
func (c *phasedHTTP) Teardown(ctx context.Context) error { return c.HTTP.Teardown(ctx) }

func (c *phasedHTTP) Call(ctx context.Context, req []byte) ([]byte, error) {
	resp, err := c.HTTP.Call(ctx, req)
	if phases.observe(err) {
		// Drop the idle connection to the stopped server now rather than
		// find it closed on the next call.
		c.HTTP.Teardown(ctx)
	}
	return resp, err
}

// serverPhases runs a quota server on a fixed loopback port through three
// phases: up until it has answered Up calls, down (its listener closed:
// connections are refused) until Down calls have been refused, then up
// again on the same port.
type serverPhases struct {
	Up, Down int

	t        *testing.T
	addr     string
	mu       sync.Mutex
	srv      *testserver.Server
	servers  []*testserver.Server
	ok       int
	refused  int
	down     bool
	restarts int
}

var phases *serverPhases

// observe counts one call and switches phases; it reports whether the
// server has just been stopped.
func (ph *serverPhases) observe(err error) (stopped bool) {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	switch {
	case err == nil:
		ph.ok++
		if ph.ok == ph.Up && ph.restarts == 0 {
			ph.srv.Close() // waits for calls in flight; the listener is gone when it returns
			ph.down = true
			return true
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		ph.refused++
		if ph.down && ph.refused == ph.Down {
			srv, err := testserver.Listen(ph.addr, testserver.Config{})
			if err != nil {
				ph.t.Errorf("restarting the server on %s: %v", ph.addr, err)
				return false
			}
			ph.srv, ph.down = srv, false
			ph.servers = append(ph.servers, srv)
			ph.restarts++
		}
	}
	return false
}

// accepted is the number of calls the servers of all phases accepted.
func (ph *serverPhases) accepted() int64 {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	var n int64
	for _, s := range ph.servers {
		n += s.Handler.Stats().Accepted
	}
	return n
}

func (ph *serverPhases) close() {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	for _, s := range ph.servers {
		s.Close()
	}
}

// TestFaultConnectionRefused: calls to a port where nothing listens fail
// with "connection refused"; the throttle takes a refused connection as a
// sign of overload, as a 429 (the SRE throttle here, whose route strategy
// sends a refused element to Errors). With the server down for the whole
// run the first call is an error and the throttle then rejects locally
// part of what follows: every element is an error or client-throttled, and
// fewer calls are made than elements. With the server down for part of the
// run (after 30 answered calls, until 20 calls were refused, then back on
// the same port) the accepted calls outweigh the refusals: exactly the
// refused ones are errors and the rest succeed.
func TestFaultConnectionRefused(t *testing.T) {
	const n = 100
	tests := []struct {
		name     string
		up, down int   // calls answered before the outage, calls refused during it; 0, 0: never up
		wantErrs int64 // -1: some, the rest client-throttled
	}{
		{"down for the whole run", 0, 0, -1},
		{"down for part of the run", 30, 20, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ph := &serverPhases{Up: tc.up, Down: tc.down, t: t}
			if tc.up > 0 {
				srv, err := testserver.NewServer(testserver.Config{})
				if err != nil {
					t.Fatal(err)
				}
				ph.srv, ph.servers, ph.addr = srv, []*testserver.Server{srv}, strings.TrimPrefix(srv.URL, "http://")
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				ph.addr, ph.down = ln.Addr().String(), true
				ln.Close()
			}
			phases = ph
			defer func() { phases = nil; ph.close() }()

			p, s := beam.NewPipelineWithRoot()
			// One group, one call at a time: the phases switch between calls.
			out := Adaptive(s, generate(s, n), &phasedHTTP{HTTP: &clientcall.HTTP{URL: "http://" + ph.addr + "/api"}},
				WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}), WithBatchSize(50))
			passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
			if tc.wantErrs >= 0 {
				passert.Count(s, out.Errors, "errors", int(tc.wantErrs))
			}
			passert.Empty(s, out.ServerThrottled)
			checkRecords(s, out.Errors, &recordCheck{Outcome: OutcomeError, Status: 0, Contains: map[string]string{"*": "connection refused"}})
			res := runPipeline(t, p, true)

			got := outcomeMetrics(t, res)
			errs, ok, ct := got[metricErrors], got[metricAccepted], got[metricClientThrottled]
			if tc.wantErrs >= 0 && (errs != tc.wantErrs || ok != n-tc.wantErrs) {
				t.Errorf("got metrics %v, want %d errors and %d successes", got, tc.wantErrs, n-tc.wantErrs)
			}
			if tc.wantErrs < 0 && (errs < 1 || ct < 1 || errs+ct != n || ok != 0) {
				t.Errorf("got metrics %v, want %d errors and client-throttled, some of each", got, n)
			}
			if calls := counter(t, res, metricCalls); calls != ok+errs {
				t.Errorf("%d calls, want one per success or error (%d)", calls, ok+errs)
			}
			if acc := ph.accepted(); acc != ok {
				t.Errorf("servers accepted %d calls, successes %d: want equal", acc, ok)
			}
			if tc.up > 0 && ph.restarts != 1 {
				t.Errorf("server restarted %d times, want 1", ph.restarts)
			}
		})
	}
}

// TestFaultThrottledThenRecovery: the quota server answers every call with
// 429 or 503 (both with Retry-After: 1) until it has rejected 30 calls,
// then recovers. With the Retry strategy, elements are tried again no sooner
// than the Retry-After; the client throttle engages during the outage. Every
// element ends in exactly one output: most succeed once the server is back,
// and the rest are throttled records that used up their attempts.
// (TestRecoveryAfterOutage covers the Route strategy.)
func TestFaultThrottledThenRecovery(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			const n, rejections = 300, 30
			h, err := testserver.NewHandler(testserver.Config{})
			if err != nil {
				t.Fatal(err)
			}
			h.SetOutage(status)
			srv := httptest.NewServer(&outageUntil{h: h, rejections: rejections})
			defer srv.Close()

			p, s := beam.NewPipelineWithRoot()
			out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.URL + "/api"},
				WithMode(ModeSRE), WithStrategy(Retry), WithMaxAttempts(recoveryAttempts), WithGroups(2), WithBatchSize(50),
				WithBatchInterval(100*time.Millisecond), WithSRE(adaptive.SREConfig{ResetInterval: 500 * time.Millisecond}), WithSeed(5))
			passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
			passert.Empty(s, out.Errors)
			passert.True(s, beam.Flatten(s, out.ServerThrottled, out.ClientThrottled), retriedOut)
			res := runPipeline(t, p, true)

			st := h.Stats()
			got := outcomeMetrics(t, res)
			if sumOutcomes(got) != n {
				t.Errorf("got metrics %v, adding up to %d, want %d", got, sumOutcomes(got), n)
			}
			if got[metricAccepted] != st.Accepted || st.Rejected < rejections {
				t.Errorf("got %d successes, server accepted %d and rejected %d: want successes = accepted, rejected >= %d",
					got[metricAccepted], st.Accepted, st.Rejected, rejections)
			}
			if got[metricAccepted] < n/2 {
				t.Errorf("got %d successes of %d: want most elements through after the recovery (%v)", got[metricAccepted], n, got)
			}
			// Every decision ends an element or sends it round again; more
			// retries than server rejections means the client throttled too.
			req, retries := counter(t, res, metricRequests), counter(t, res, metricRetries)
			if req != retries+n {
				t.Errorf("got %d requests, %d retries: want requests = retries + %d", req, retries, n)
			}
			if retries <= st.Rejected {
				t.Errorf("got %d retries for %d server rejections: want more, the client throttle engaging", retries, st.Rejected)
			}
			t.Logf("outputs %v, %d requests, %d retries; server %d accepted, %d rejected",
				got, counter(t, res, metricRequests), counter(t, res, metricRetries), st.Accepted, st.Rejected)
		})
	}
}

// recoveryAttempts is the MaxAttempts of TestFaultThrottledThenRecovery:
// enough that an element's attempts span many of the client throttle's
// counter windows even when the runner fires the groups' timers in
// bunches. With 10, one run of the package under the race detector on a
// machine loaded far beyond its cores had most elements use up their
// attempts while the throttle was still engaged.
const recoveryAttempts = 20

// retriedOut reports whether a throttled record of
// TestFaultThrottledThenRecovery used up its attempts.
func retriedOut(r Record) bool {
	return r.Attempts == recoveryAttempts && (r.Outcome == OutcomeClientThrottled || r.StatusCode != 0)
}

func init() {
	register.Function1x1[Record, bool](retriedOut)
}

// panicCaller panics in a different way for each last digit of the payload
// and echoes the others. Counts is always nil.
type panicCaller struct {
	Counts map[string]int
}

func (c panicCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	switch req[len(req)-1] {
	case '1':
		panic(errors.New("an error value"))
	case '2':
		panic(nil) // recovered as *runtime.PanicNilError
	case '3':
		return []byte{req[len(req)]}, nil // index out of range: a runtime.Error
	case '4':
		c.Counts[string(req)]++ // assignment to entry in nil map
		return req, nil
	case '5':
		panic(struct{ Code int }{42})
	}
	return req, nil
}

// TestFaultCallerPanics extends TestConservation's panicking caller: panics
// of every kind (error values, nil, runtime errors, structs), several calls
// in flight, each go to Errors with the panic and the original payload,
// without failing the bundle or disturbing the calls running beside them.
func TestFaultCallerPanics(t *testing.T) {
	const n = 500
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), panicCaller{}, WithGroups(3), WithCallsInFlight(4), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
	passert.Equals(s, beam.ParDo(s, recordInput, out.Errors), inputsOf(n, "12345")...)
	checkRecords(s, out.Errors, &recordCheck{Outcome: OutcomeError, Status: 0, Contains: map[string]string{
		"*": "throttle: caller panicked: ",
		"1": "an error value",
		"2": "panic called with nil argument",
		"3": "runtime error: index out of range [8] with length 8",
		"4": "assignment to entry in nil map",
		"5": "{42}",
	}})
	res := runPipeline(t, p, true)
	if got, want := counter(t, res, metricErrors), int64(len(inputsOf(n, "12345"))); got != want {
		t.Errorf("got %d errors, want %d", got, want)
	}
}

// panicKey is a key function that panics on payloads ending in 0.
type panicKey struct{}

func (panicKey) Key(b []byte) string {
	if b[len(b)-1] == '0' {
		panic("no key for " + string(b))
	}
	return string(b[len(b)-1:])
}

// TestFaultKeyFuncPanics: a key function that panics on some elements sends
// them to Errors (never called), and the others through.
func TestFaultKeyFuncPanics(t *testing.T) {
	const n = 200
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), clientcall.Echo{}, WithKeyFunc(panicKey{}))
	passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
	passert.Equals(s, beam.ParDo(s, recordInput, out.Errors), inputsOf(n, "0")...)
	checkRecords(s, out.Errors, &recordCheck{Outcome: OutcomeError, Status: 0,
		Contains: map[string]string{"*": "throttle: key function panicked: no key for e"}})
	runPipeline(t, p, true)
}

// stuckCaller never returns for payloads ending in 0 to 4 (it ignores its
// context and blocks until the test ends) and echoes the others.
type stuckCaller struct{}

// unstick is closed at the end of TestFaultCallerHangs to let the abandoned
// calls of stuckCaller return.
var unstick chan struct{}

func (stuckCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	if req[len(req)-1] <= '4' {
		<-unstick
	}
	return req, nil
}

// TestFaultCallerHangs extends TestCallTimeout: calls that never return (not
// even when their context is cancelled) are abandoned at the call timeout and
// their elements go to Errors, while the calls beside them in the same wave
// succeed.
func TestFaultCallerHangs(t *testing.T) {
	const n = 60
	unstick = make(chan struct{})
	defer close(unstick)
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), stuckCaller{}, WithGroups(2), WithCallsInFlight(10), WithCallTimeout(100*time.Millisecond),
		WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
	passert.Equals(s, beam.ParDo(s, recordInput, out.Errors), inputsOf(n, "01234")...)
	checkRecords(s, out.Errors, &recordCheck{Outcome: OutcomeError, Status: 0,
		Contains: map[string]string{"*": "throttle: call did not return within the 100ms timeout"}})
	runPipeline(t, p, true)
}

// strictCaller is an API that rejects empty requests with HTTP 400 and
// answers 429 to payloads starting with "slow", echoing the others.
type strictCaller struct{}

func (strictCaller) Call(_ context.Context, req []byte) ([]byte, error) {
	switch {
	case len(req) == 0:
		return nil, &clientcall.StatusError{StatusCode: http.StatusBadRequest, Message: "empty request"}
	case strings.HasPrefix(string(req), "slow"):
		return nil, &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true}
	}
	return req, nil
}

// recordJSONLine is a Record's JSON form, without its times.
func recordJSONLine(r Record) string {
	r.FirstAttempt, r.LastAttempt = 0, 0
	b, err := r.MarshalJSON()
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// TestBadInputBytes: elements the transform cannot or should not send.
// Empty payloads are not special to the transform: the caller gets them and
// decides (here an API answering 400), and the record keeps the empty input.
// Non-UTF-8 payloads keep their bytes; their record's JSON carries them as
// base64. Payloads over WithMaxPayloadBytes go to Errors without a call.
func TestBadInputBytes(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.Create(s, []byte{}, []byte("ok"), []byte("slow\xff\xfe"), []byte("\xc3\x28 bad UTF-8"),
		[]byte("slow and far too long"), []byte("also far too long"))
	out := Adaptive(s, in, strictCaller{}, WithMaxPayloadBytes(16), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Equals(s, beam.ParDo(s, bytesToString, out.Success), "ok", "\xc3\x28 bad UTF-8")
	passert.Equals(s, beam.ParDo(s, recordJSONLine, out.ServerThrottled),
		`{"input":"c2xvd//+","input_encoding":"base64","error":"Server returned HTTP response code: 429","outcome":"server_throttled","status_code":429,"rejection_probability":0,"attempts":1,"group":"0"}`)
	passert.Equals(s, beam.ParDo(s, recordInput, out.Errors), "", "slow and far too long", "also far too long")
	passert.True(s, out.Errors, badBytesRecordOK)
	runPipeline(t, p, true)
}

func badBytesRecordOK(r Record) bool {
	switch string(r.Input) {
	case "":
		return r.StatusCode == http.StatusBadRequest && strings.HasSuffix(r.Error, "empty request") && r.Attempts == 1
	case "slow and far too long":
		return r.Error == "throttle: payload of 21 bytes exceeds the 16-byte limit" && r.Attempts == 0
	case "also far too long":
		return r.Error == "throttle: payload of 17 bytes exceeds the 16-byte limit" && r.Attempts == 0
	}
	return false
}

func init() {
	register.Function1x1[Record, bool](badBytesRecordOK)
	register.Function1x1[Record, bool](badStructRecordOK)
}

// reading is a struct element; a NaN cannot be encoded as JSON.
type reading struct {
	Sensor string
	Value  float64
}

// readingCaller answers a NaN for negative readings: a response the
// transform cannot encode.
type readingCaller struct{}

func (readingCaller) Call(_ context.Context, r reading) (reading, error) {
	if r.Value < 0 {
		r.Value = math.NaN()
	}
	return r, nil
}

// TestBadInputStructs: struct elements that cannot be encoded (a NaN field)
// go to Errors with a readable rendering of the element, without a call; a
// response that cannot be encoded sends its element to Errors with the
// original input.
func TestBadInputStructs(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	in := beam.Create(s, reading{"a", 1}, reading{"b", math.NaN()}, reading{"c", -1})
	out := Adaptive(s, in, readingCaller{}, WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}))
	passert.Equals(s, out.Success, reading{"a", 1})
	passert.Count(s, out.Errors, "errors", 2)
	passert.True(s, out.Errors, badStructRecordOK)
	runPipeline(t, p, true)
}

func badStructRecordOK(r Record) bool {
	switch string(r.Input) {
	case "{Sensor:b Value:NaN}":
		return strings.Contains(r.Error, "throttle: encode throttle.reading element as JSON: json: unsupported value: NaN") && r.Attempts == 0
	case `{"Sensor":"c","Value":-1}`:
		return strings.Contains(r.Error, "json: unsupported value: NaN") && r.Attempts == 1
	}
	return false
}
