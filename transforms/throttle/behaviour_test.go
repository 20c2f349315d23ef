package throttle

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/periodic"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*alwaysThrottled)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*hangingCaller)(nil)).Elem())
	register.DoFn3x0[beam.Window, []byte, func(string)](&windowNameFn{})
	register.DoFn3x0[beam.EventTime, int, func(beam.EventTime, []byte)](&stampFn{})
	register.Function1x1[Record, bool](retryRecordOK)
	register.Function1x1[Record, bool](timeoutRecordOK)
	register.Function1x1[Record, bool](bufferFullOK)
	register.Function1x1[Record, bool](expiredOK)
	register.DoFn2x0[Record, func(string)](&errorLacks{})
}

// alwaysThrottled answers 429 with a Retry-After of 0 to everything.
type alwaysThrottled struct{}

func (alwaysThrottled) Call(context.Context, []byte) ([]byte, error) {
	return nil, &clientcall.StatusError{StatusCode: http.StatusTooManyRequests, Throttled: true}
}

func retryRecordOK(r Record) bool {
	switch r.Outcome {
	case OutcomeServerThrottled:
		return r.Attempts == 3 && r.StatusCode == 429
	case OutcomeClientThrottled:
		return r.Attempts == 3 && r.StatusCode == 0 && r.Probability > 0
	}
	return false
}

// TestRetryStrategyIsBounded: a backend that always throttles; with Retry
// and MaxAttempts 3 every element is decided on exactly three times, then
// routed to a throttled output (server or client: with no accepts at all p
// rises towards 1 whatever K) with its attempt count.
func TestRetryStrategyIsBounded(t *testing.T) {
	const n = 200
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), alwaysThrottled{},
		WithStrategy(Retry), WithMaxAttempts(3), WithMode(ModeSRE), WithSRE(adaptive.SREConfig{K: 1e9}), WithGroups(2), WithBatchSize(1000))
	throttled := beam.Flatten(s, out.ServerThrottled, out.ClientThrottled)
	passert.Count(s, throttled, "throttled", n)
	passert.True(s, throttled, retryRecordOK)
	passert.Empty(s, out.Success)
	passert.Empty(s, out.Errors)
	res := runPipeline(t, p, true)
	if got, want := counter(t, res, metricRetries), int64(2*n); got != want {
		t.Errorf("retries = %d, want %d", got, want)
	}
	if got, want := counter(t, res, metricRequests), int64(3*n); got != want {
		t.Errorf("requests = %d, want %d", got, want)
	}
}

// TestDropStrategy: throttled elements are only counted.
func TestDropStrategy(t *testing.T) {
	const n = 100
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), alwaysThrottled{}, WithMode(ModeSRE), WithStrategy(Drop))
	passert.Empty(s, out.ServerThrottled)
	passert.Empty(s, out.ClientThrottled)
	res := runPipeline(t, p, true)
	if got := counter(t, res, metricDropped); got != n {
		t.Errorf("dropped = %d, want %d", got, n)
	}
}

// hangingCaller ignores its context and blocks for Block.
type hangingCaller struct{ Block time.Duration }

func (c hangingCaller) Call(context.Context, []byte) ([]byte, error) {
	time.Sleep(c.Block)
	return []byte("late"), nil
}

func timeoutRecordOK(r Record) bool {
	return r.Outcome == OutcomeError && strings.Contains(r.Error, "did not return within the 50ms timeout") &&
		strings.HasPrefix(string(r.Input), "e")
}

// TestCallTimeout: a caller that hangs past the per-call timeout sends its
// elements to Errors and does not stall the bundle.
func TestCallTimeout(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, 3), hangingCaller{Block: 2 * time.Second}, WithCallTimeout(50*time.Millisecond))
	passert.Count(s, out.Errors, "errors", 3)
	passert.True(s, out.Errors, timeoutRecordOK)
	passert.Empty(s, out.Success)
	runPipeline(t, p, true)
}

// stampFn gives element i the event time base + i seconds.
type stampFn struct{}

func (stampFn) ProcessElement(_ beam.EventTime, i int, emit func(beam.EventTime, []byte)) {
	emit(mtime.FromTime(time.Unix(1_700_000_000+int64(i), 0)), []byte{byte('a' + i%26)})
}

// windowNameFn emits the name of each element's window.
type windowNameFn struct{}

func (windowNameFn) ProcessElement(w beam.Window, _ []byte, emit func(string)) {
	if _, ok := w.(window.GlobalWindow); ok {
		emit("global")
		return
	}
	emit(fmt.Sprint(w))
}

// TestFixedWindowsInputIsRewindowed: input in 10 s fixed windows is
// throttled in the global window; outputs are in the global window.
func TestFixedWindowsInputIsRewindowed(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	var ints []any
	for i := range 40 {
		ints = append(ints, i)
	}
	in := beam.ParDo(s, &stampFn{}, beam.Create(s, ints...))
	in = beam.WindowInto(s, window.NewFixedWindows(10*time.Second), in)
	out := Adaptive(s, in, clientcall.Echo{})
	names := beam.ParDo(s, &windowNameFn{}, out.Success)
	want := make([]any, 40)
	for i := range want {
		want[i] = "global"
	}
	passert.Equals(s, names, want...)
	runPipeline(t, p, true)
}

// TestUnboundedInput: a streaming source (periodic impulse with an end
// time) flows through processing-time timers and the job ends by itself.
func TestUnboundedInput(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	start := time.Now()
	in := periodic.Impulse(s, start, start.Add(2*time.Second), 100*time.Millisecond, false)
	out := Adaptive(s, in, clientcall.Echo{}, WithBatchInterval(200*time.Millisecond), WithGroups(2))
	passert.Count(s, out.Success, "success", 20)
	passert.Empty(s, out.Errors)
	res := runPipeline(t, p, false)
	if got := counter(t, res, metricAccepted); got != 20 {
		t.Errorf("accepted = %d, want 20", got)
	}
}

// outageUntil wraps the quota server's handler: it answers 429 to
// everything (an outage) until it has rejected Rejections requests, then
// ends the outage. Its switch is driven by the requests themselves, not by
// wall-clock time.
type outageUntil struct {
	h          *testserver.Handler
	rejections int64
}

func (o *outageUntil) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.h.ServeHTTP(w, r)
	if o.h.Outage() != 0 && o.h.Stats().Rejected >= o.rejections {
		o.h.SetOutage(0)
	}
}

// TestRecoveryAfterOutage runs the transform with the HTTP caller over
// loopback against the quota test server. The server starts in an outage
// (every call answered 429) that ends after 8 rejections: server throttles
// appear, the client throttle engages as p rises, and after the counters
// reset sending resumes and succeeds. Outputs match the server's own counts.
//
// Prism's clock is synthetic, so the 40 firings of 50 elements span 2 s of
// processing time, 20 counter windows, however slow the machine is. Each
// window's first call goes out (p is 0 after a reset), so the outage is over
// by the eighth window at the latest, and later calls are accepted. The
// client throttles something unless it happens to send each of the first
// nine calls after a rejection, at p = 1/2, 2/3, …, 8/9: a chance of 1 in
// 8! = 40,320.
func TestRecoveryAfterOutage(t *testing.T) {
	const n = 2000
	h, err := testserver.NewHandler(testserver.Config{Quota: 100000, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.SetOutage(http.StatusTooManyRequests)
	srv := httptest.NewServer(&outageUntil{h: h, rejections: 8})
	defer srv.Close()

	p, s := beam.NewPipelineWithRoot()
	Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.URL + "/api"},
		WithMode(ModeSRE), WithBatchSize(50), WithBatchInterval(50*time.Millisecond), WithSRE(adaptive.SREConfig{ResetInterval: 100 * time.Millisecond}))
	res := runPipeline(t, p, true)

	st := h.Stats()
	got := map[string]int64{}
	for _, m := range []string{metricAccepted, metricClientThrottled, metricServerThrottled, metricErrors} {
		got[m] = counter(t, res, m)
	}
	if sum := got[metricAccepted] + got[metricClientThrottled] + got[metricServerThrottled] + got[metricErrors]; sum != n {
		t.Errorf("outputs add up to %d, want %d (%v)", sum, n, got)
	}
	if got[metricServerThrottled] != st.Rejected || st.Rejected < 8 {
		t.Errorf("server throttled = %d, server rejected = %d, want equal and >= 8", got[metricServerThrottled], st.Rejected)
	}
	if got[metricClientThrottled] == 0 {
		t.Errorf("client throttled = 0, want > 0 once p rose")
	}
	if got[metricAccepted] != st.Accepted || st.Accepted == 0 {
		t.Errorf("success = %d, server accepted = %d, want equal and > 0 (sending resumed)", got[metricAccepted], st.Accepted)
	}
	if got[metricErrors] != 0 {
		t.Errorf("errors = %d, want 0", got[metricErrors])
	}
	t.Logf("outputs %v; server %d accepted, %d rejected", got, st.Accepted, st.Rejected)
}

// TestOverQuota: offered load far above a 100/s token bucket quota, with
// the HTTP caller over loopback, in SRE mode (the original tool's rule,
// routing what it throttles). The server's quota runs on the wall clock, so
// how many calls it rejects depends on the machine's speed; this test
// asserts only what holds at any speed: every element is in exactly one
// output, the outputs agree with the server's own counts, the bucket's
// first quota of calls is accepted (it starts full and the throttle sends
// at once), and no more is accepted than the bucket allows over the seconds
// the server was busy. How much each mode wastes is measured on the
// simulator's virtual clock (package sim) and in real time by
// make livebench, not here.
func TestOverQuota(t *testing.T) {
	const n, quota = 3000, 100
	srv, err := testserver.NewServer(testserver.Config{Quota: quota, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	p, s := beam.NewPipelineWithRoot()
	Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.Endpoint()},
		WithMode(ModeSRE), WithGroups(2), WithBatchSize(50), WithBatchInterval(50*time.Millisecond))
	res := runPipeline(t, p, true)

	st := srv.Handler.Stats()
	got := outcomeMetrics(t, res)
	if sumOutcomes(got) != n {
		t.Errorf("outputs add up to %d, want %d (%v)", sumOutcomes(got), n, got)
	}
	if got[metricServerThrottled] != st.Rejected {
		t.Errorf("server throttled = %d, server rejected = %d, want equal", got[metricServerThrottled], st.Rejected)
	}
	if got[metricAccepted] != st.Accepted {
		t.Errorf("success = %d, server accepted = %d, want equal", got[metricAccepted], st.Accepted)
	}
	if got[metricErrors] != 0 {
		t.Errorf("errors = %d, want 0", got[metricErrors])
	}
	// From the start of the first second with a request to the end of the
	// last, the bucket held quota tokens and refilled at quota/s.
	busy := st.Series[len(st.Series)-1].T - st.Series[0].T + 1
	if lo, hi := int64(quota), quota*(busy+1); st.Accepted < lo || st.Accepted > hi {
		t.Errorf("accepted %d over %d busy seconds, want within [%d, %d]", st.Accepted, busy, lo, hi)
	}
	t.Logf("outputs %v; server %d accepted, %d rejected over %d seconds", got, st.Accepted, st.Rejected, busy)
}

// TestPostponeOverQuota: a bounded input over quota, with the default mode
// and bounds (the pacer, strategy Postpone, no max wait), against a token
// bucket, a fixed window and a strict limiter (GCRA with no burst): what
// the pacer does not send now, and what the server answers 429, waits in
// the queue, so every element ends a success and nothing is throttled. That holds at any
// machine speed: nothing is rejected locally and nothing expires. The run
// takes about n / quota seconds of real time, since the server's quota runs
// on the wall clock.
func TestPostponeOverQuota(t *testing.T) {
	const n, quota = 400, 100
	for _, tc := range []struct {
		name string
		cfg  testserver.Config
	}{
		{"token bucket", testserver.Config{Quota: quota, Period: time.Second}},
		{"fixed window", testserver.Config{Quota: quota, Period: time.Second, Mode: testserver.FixedWindow}},
		{"strict limiter", testserver.Config{Quota: quota, Period: time.Second, Mode: testserver.GCRA}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := testserver.NewServer(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, s := beam.NewPipelineWithRoot()
			out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.Endpoint()}, WithGroups(2)) // default mode and bounds
			passert.Count(s, out.Success, "success", n)
			passert.Empty(s, out.ClientThrottled)
			passert.Empty(s, out.ServerThrottled)
			passert.Empty(s, out.Errors)
			res := runPipeline(t, p, true)
			st := srv.Handler.Stats()
			got := outcomeMetrics(t, res)
			if got[metricAccepted] != n || st.Accepted != n {
				t.Errorf("success = %d, server accepted = %d, want %d", got[metricAccepted], st.Accepted, n)
			}
			if req := counter(t, res, metricRequests); req != n+st.Rejected {
				t.Errorf("requests = %d, want %d accepted + %d rejected", req, n, st.Rejected)
			}
			t.Logf("server %d accepted, %d rejected (waste %.1f%%); %d postponements",
				st.Accepted, st.Rejected, 100*float64(st.Rejected)/float64(st.Accepted+st.Rejected), counter(t, res, metricPostponed))
		})
	}
}

func bufferFullOK(r Record) bool {
	return r.Outcome == OutcomeClientThrottled && r.Error == "Throttled by Client. Group buffer full (100 elements)" && len(r.Input) > 0
}

// TestMaxBufferedSheds: with a bounded buffer, elements arriving at a full
// group are shed to ClientThrottled at once; nothing is lost.
func TestMaxBufferedSheds(t *testing.T) {
	const n = 2000
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), clientcall.Echo{}, WithMaxBuffered(100), WithBatchSize(10))
	passert.True(s, out.ClientThrottled, bufferFullOK)
	res := runPipeline(t, p, true)
	ok, shed := counter(t, res, metricAccepted), counter(t, res, metricClientThrottled)
	if ok+shed != n || shed == 0 || ok < 100 {
		t.Errorf("success %d + shed %d, want %d with some shed and at least one full buffer processed", ok, shed, n)
	}
}

func expiredOK(r Record) bool {
	switch r.Outcome {
	case OutcomeServerThrottled: // tried, and its last answer was a 429
		return r.StatusCode == 429 && r.Attempts >= 1
	case OutcomeClientThrottled: // never tried: the pacer held it back (past its max wait)
		return r.Attempts == 0 && strings.HasPrefix(r.Error, "Throttled by Client. ") && strings.Contains(r.Error, "the max wait (2s)")
	}
	return false
}

// TestMaxWaitExpires: under the Postpone strategy a backend that answers
// 429 to everything keeps every element queued until it has waited longer
// than MaxWait; then it goes to ServerThrottled if its last attempt was a
// 429, or to ClientThrottled if the pacer never sent it. Nothing is lost and
// nothing else is emitted.
func TestMaxWaitExpires(t *testing.T) {
	const n = 50
	p, s := beam.NewPipelineWithRoot()
	out := Adaptive(s, generate(s, n), alwaysThrottled{}, WithMode(ModePaced), WithMaxWait(2*time.Second),
		WithBatchInterval(100*time.Millisecond))
	throttled := beam.Flatten(s, out.ServerThrottled, out.ClientThrottled)
	passert.Count(s, throttled, "throttled", n)
	passert.True(s, throttled, expiredOK)
	passert.Empty(s, out.Success)
	passert.Empty(s, out.Errors)
	res := runPipeline(t, p, true)
	if st := counter(t, res, metricServerThrottled); st == 0 {
		t.Errorf("server throttled = 0, want the elements the pacer sent")
	}
}

// refusingServer starts a quota server that refuses every call from now
// on with 429 (a fixed window of one call an hour, used up here), with a
// Retry-After of about an hour or, with noRetryAfter, none.
func refusingServer(t *testing.T, noRetryAfter bool) *testserver.Server {
	t.Helper()
	srv, err := testserver.NewServer(testserver.Config{Quota: 1, Period: time.Hour, Mode: testserver.FixedWindow, NoRetryAfter: noRetryAfter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.Endpoint(), "text/plain", strings.NewReader("use up the quota"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("priming call: got HTTP %d, want 200", resp.StatusCode)
	}
	return srv
}

// TestAlwaysRefusedEnds: a bounded input against an API that refuses
// every call, with the default mode and strategy (the pacer, Postpone) and
// a max stall: the job ends, and every element is in exactly one throttled
// output. With a Retry-After (an hour) longer than the max stall (10
// minutes), the elements are routed at once: the refused ones to
// ServerThrottled, the ones the pacer holds for the Retry-After to
// ClientThrottled, saying until when. Without one, the pacer keeps probing
// until the max stall (1 s here) runs out (or its next probe would come
// after it). Every call made was refused, and every element answered 429
// is server-throttled.
func TestAlwaysRefusedEnds(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name         string
		noRetryAfter bool
		maxStall     time.Duration
		ctError      string // what the client-throttled records say
	}{
		{"Retry-After of an hour", false, 10 * time.Minute, "after the max stall (10m0s) runs out"},
		{"no Retry-After", true, time.Second, "the max stall (1s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := refusingServer(t, tc.noRetryAfter)
			p, s := beam.NewPipelineWithRoot()
			out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.Endpoint()}, WithMaxStall(tc.maxStall),
				WithBatchInterval(100*time.Millisecond))
			passert.Equals(s, outputInputs(s, out), inputsOf(n, allDigits)...)
			passert.Empty(s, out.Success)
			passert.Empty(s, out.Errors)
			checkRecords(s, out.ServerThrottled, &recordCheck{Outcome: OutcomeServerThrottled, Status: 429})
			passert.Empty(s, beam.ParDo(s, &errorLacks{Want: tc.ctError}, out.ClientThrottled))
			res := runPipeline(t, p, false)
			got := outcomeMetrics(t, res)
			rejected := srv.Handler.Stats().Rejected
			// The 10-minute bound leaves time for a call; the 1 s one may
			// run out before the first (on a busy machine).
			if tc.maxStall > time.Minute && rejected == 0 {
				t.Errorf("no call made, want one")
			}
			if sumOutcomes(got) != n || got[metricServerThrottled] > rejected || (rejected > 0) != (got[metricServerThrottled] > 0) {
				t.Errorf("outcomes %v: want %d in all, at most the %d calls refused server-throttled, and some if any", got, n, rejected)
			}
			if calls := counter(t, res, metricCalls); calls != rejected {
				t.Errorf("%d calls made, the server refused %d: want every call refused", calls, rejected)
			}
			t.Logf("outcomes %v; %d calls", got, rejected)
		})
	}
}

// errorLacks emits the Records whose Error does not contain Want.
type errorLacks struct{ Want string }

func (f *errorLacks) ProcessElement(r Record, emit func(string)) {
	if !strings.Contains(r.Error, f.Want) {
		emit(string(r.Input) + ": " + r.Error)
	}
}
