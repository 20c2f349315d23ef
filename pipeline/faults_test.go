package pipeline

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// Fault and bad-input tests of the whole pipeline: files or a dead-letter
// subscription in, JSONL files out. Each checks that every input is in
// exactly one output file (or parked) and that the files agree with the
// summary.

// Fault modes of faultyBackend, chosen by a request's "id" modulo 6.
const (
	modeOK          = iota // 200, echoing the body
	modeThrottled          // 429, Retry-After: 0
	modeServerError        // 500
	modeHang               // no answer until the client gives up
	modeClose              // connection closed without an answer
	modeUnavailable        // 503 without Retry-After: an error, not throttling
	numModes
)

// faultyBackend is an HTTP API over loopback that fails in every way a
// backend can. A request whose body is not a JSON object with an integer
// "id" gets 400; otherwise id%numModes picks the answer. Error answers echo
// the request's headers in their body, as careless servers do, so that
// tests can check the caller keeps header values out of error messages.
type faultyBackend struct {
	*httptest.Server

	mu      sync.Mutex
	seen    map[string]int      // request bodies
	headers map[string][]string // header name → values received
}

func newFaultyBackend(t *testing.T) *faultyBackend {
	t.Helper()
	b := &faultyBackend{seen: map[string]int{}, headers: map[string][]string{}}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func (b *faultyBackend) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	b.mu.Lock()
	b.seen[string(body)]++
	for name, v := range r.Header {
		b.headers[name] = append(b.headers[name], v...)
	}
	b.mu.Unlock()

	var req struct{ ID *int }
	if err := json.Unmarshal(body, &req); err != nil || req.ID == nil {
		http.Error(w, fmt.Sprintf("invalid request %q: want a JSON object with an id (request headers %v)", body, r.Header), http.StatusBadRequest)
		return
	}
	echo := fmt.Sprintf("request %d refused; request headers were %v", *req.ID, r.Header)
	switch *req.ID % numModes {
	case modeOK:
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	case modeThrottled:
		w.Header().Set("Retry-After", "0")
		http.Error(w, echo, http.StatusTooManyRequests)
	case modeServerError:
		http.Error(w, echo, http.StatusInternalServerError)
	case modeHang:
		<-r.Context().Done()
	case modeClose:
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	case modeUnavailable:
		http.Error(w, echo, http.StatusServiceUnavailable)
	}
}

// requests returns how many requests the backend saw with this body.
func (b *faultyBackend) requests(body string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen[string(body)]
}

// headerValues returns the values received for a header.
func (b *faultyBackend) headerValues(name string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.headers[http.CanonicalHeaderKey(name)]...)
}

// outputLines reads the four outcome files of a run, keyed by outcome.
func outputLines(t *testing.T, prefix string) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, name := range []string{OutSuccess, OutClientThrottled, OutServerThrottled, OutErrors} {
		out[name] = readLines(t, prefix, name)
	}
	return out
}

// inputOf decodes a line's "input": text, or base64 with "input_encoding".
func inputOf(t *testing.T, line map[string]any) string {
	t.Helper()
	in, _ := line["input"].(string)
	if line["input_encoding"] == "base64" {
		b, err := base64.StdEncoding.DecodeString(in)
		if err != nil {
			t.Fatalf("line %v: input: %v", line, err)
		}
		return string(b)
	}
	return in
}

// checkConservation checks that every want input is in exactly one output
// line and nothing else is, and that the line counts agree with the summary.
func checkConservation(t *testing.T, lines map[string][]map[string]any, sum Summary, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, ls := range lines {
		for _, l := range ls {
			seen[inputOf(t, l)]++
		}
	}
	for _, in := range want {
		if seen[in] != 1 {
			t.Errorf("input %q is in %d output lines, want 1", in, seen[in])
		}
		delete(seen, in)
	}
	for in, n := range seen {
		t.Errorf("output lines hold %d × %q, which is not an input", n, in)
	}
	for name, n := range map[string]int64{OutSuccess: sum.Success, OutClientThrottled: sum.ClientThrottled,
		OutServerThrottled: sum.ServerThrottled, OutErrors: sum.Errors} {
		if int64(len(lines[name])) != n {
			t.Errorf("%s: summary says %d, files hold %d lines", name, n, len(lines[name]))
		}
	}
	if sum.Total() != int64(len(want)) {
		t.Errorf("summary accounts for %d elements, want %d (%+v)", sum.Total(), len(want), sum)
	}
}

// writeInput writes lines to a file in a new directory and returns its path.
func writeInput(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFaultsEndToEnd runs JSONL files through the pipeline against a backend
// that answers 200, 429, 500, 503, never, or by closing the connection, by
// element. Every input line is in exactly one output file, with the outcome
// and message its answer calls for (or client-throttled, once the adaptive
// throttle engages), and the files agree with the summary.
func TestFaultsEndToEnd(t *testing.T) {
	const n = 180
	backend := newFaultyBackend(t)
	var in []string
	for i := range n {
		in = append(in, fmt.Sprintf(`{"id":%d}`, i))
	}
	o := baseOptions(t)
	o.Input = writeInput(t, in)
	o.CallerOptions.URL = backend.URL + "/api"
	o.CallTimeout = 200 * time.Millisecond
	o.CallsInFlight = 10
	sum := run(t, o)

	lines := outputLines(t, o.OutputPrefix)
	checkConservation(t, lines, sum, in)
	want := map[int]struct{ output, text string }{
		modeOK:          {OutSuccess, ""},
		modeThrottled:   {OutServerThrottled, "Server returned HTTP response code: 429"},
		modeServerError: {OutErrors, "HTTP 500 Internal Server Error: request"},
		modeHang:        {OutErrors, "throttle: call did not return within the 200ms timeout"},
		modeClose:       {OutErrors, "connection closed by server: EOF"},
		modeUnavailable: {OutErrors, "HTTP 503 Service Unavailable: request"},
	}
	modes := map[string]int{}
	for name, ls := range lines {
		for _, l := range ls {
			var e struct{ ID int }
			if err := json.Unmarshal([]byte(inputOf(t, l)), &e); err != nil {
				t.Fatalf("%s line %v: input is not an original line: %v", name, l, err)
			}
			w := want[e.ID%numModes]
			if name == OutClientThrottled {
				continue // any element may be throttled by the client
			}
			modes[name]++
			errText, _ := l["error"].(string)
			if name != w.output || !strings.Contains(errText, w.text) {
				t.Errorf("input %d is in %s with error %q, want %s with %q", e.ID, name, errText, w.output, w.text)
			}
		}
	}
	for _, name := range []string{OutSuccess, OutServerThrottled, OutErrors} {
		if modes[name] == 0 {
			t.Errorf("no %s lines: want every outcome", name)
		}
	}
	for _, line := range in {
		if c := backend.requests(line); c > 1 {
			t.Errorf("backend saw %s %d times, want at most once", line, c)
		}
	}
}

// jsonAPI is a backend that answers 400 to requests that are not JSON
// objects and echoes the others.
func jsonAPI(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			http.Error(w, "invalid JSON: "+err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestBadInputLines: JSONL input lines that are not what a JSON API expects.
// The pipeline does not parse lines: each reaches the caller as it is
// (blank lines excepted: they are not records) and the API's answer decides
// its outcome. Against an API that rejects non-JSON with 400, malformed JSON,
// plain text, whitespace and non-UTF-8 lines each get an error line with the
// status and the original bytes (base64 with "input_encoding" when not
// UTF-8); against the quota server, which echoes anything, they succeed and
// the non-JSON response is written as a string. Either way a line over
// --max_payload_bytes gets an error line without a call.
func TestBadInputLines(t *testing.T) {
	const (
		good       = `{"id":1,"text":"ok"}`
		truncated  = `{"id":2,"text":"cut off`
		text       = `not JSON at all`
		spaces     = "   \t "
		notUTF8    = "\xff\xfe{\"id\":3}"
		controlChr = "{\"id\":4}\x00\x1b"
	)
	long := `{"id":5,"text":"` + strings.Repeat("x", 3000) + `"}`
	in := []string{good, truncated, text, spaces, notUTF8, controlChr, long}

	echo, err := testserver.NewServer(testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	tests := []struct {
		name        string
		url         string
		wantSuccess []string
		wantErrors  map[string]string // input → text of its error line
	}{
		{"JSON API", jsonAPI(t), []string{good}, map[string]string{
			truncated:  "HTTP 400 Bad Request: invalid JSON: unexpected end of JSON input",
			text:       "HTTP 400 Bad Request: invalid JSON: invalid character 'o' in literal null",
			spaces:     "HTTP 400 Bad Request: invalid JSON: unexpected end of JSON input",
			notUTF8:    "HTTP 400 Bad Request: invalid JSON: invalid character 'ÿ' looking for beginning of value",
			controlChr: `HTTP 400 Bad Request: invalid JSON: invalid character '\x00' after top-level value`,
			long:       "payload of 3018 bytes exceeds --max_payload_bytes=2000",
		}},
		{"echo server", echo.Endpoint(), []string{good, truncated, text, spaces, notUTF8, controlChr}, map[string]string{
			long: "payload of 3018 bytes exceeds --max_payload_bytes=2000",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t)
			o.Input = writeInput(t, append(in, "", ""))
			o.CallerOptions.URL = tc.url
			o.MaxPayload = 2000
			o.K = 1e9
			sum := run(t, o)
			lines := outputLines(t, o.OutputPrefix)
			checkConservation(t, lines, sum, in)

			var gotSuccess []string
			for _, l := range lines[OutSuccess] {
				in := inputOf(t, l)
				gotSuccess = append(gotSuccess, in)
				if in == notUTF8 && l["input_encoding"] != "base64" {
					t.Errorf("non-UTF-8 input written as %v, want base64", l)
				}
				switch resp := l["response"].(type) {
				case map[string]any: // a JSON answer is embedded
					if !json.Valid([]byte(in)) {
						t.Errorf("input %q: response embedded as JSON %v", in, resp)
					}
				case string: // anything else is a string, base64 when not UTF-8
					want := in
					if l["response_encoding"] == "base64" {
						want = base64.StdEncoding.EncodeToString([]byte(in))
					}
					if resp != want {
						t.Errorf("input %q: got response %q (encoding %v), want the echo", in, resp, l["response_encoding"])
					}
				default:
					t.Errorf("input %q: response %v", in, resp)
				}
			}
			if len(gotSuccess) != len(tc.wantSuccess) {
				t.Errorf("got successes %q, want %q", gotSuccess, tc.wantSuccess)
			}
			for _, l := range lines[OutErrors] {
				in := inputOf(t, l)
				want, ok := tc.wantErrors[in]
				if errText, _ := l["error"].(string); !ok || !strings.Contains(errText, want) {
					t.Errorf("input %.40q: got error %q, want one containing %q", in, errText, want)
				}
				if in == notUTF8 && l["input_encoding"] != "base64" {
					t.Errorf("non-UTF-8 input written as %v, want base64", l)
				}
			}
			if len(lines[OutErrors]) != len(tc.wantErrors) {
				t.Errorf("got %d error lines, want %d", len(lines[OutErrors]), len(tc.wantErrors))
			}
		})
	}
}

// TestReprocessMalformedDeadLetters extends
// TestReprocessParksAndRejectsMalformed to every kind of malformed
// "attempts" attribute, and to dead-letter messages this pipeline did not
// write. A malformed count goes to the errors file with its payload and the
// attribute's value; "+2" and "03" are read as counts (strconv.Atoi's
// grammar); a message without the attribute counts as a first attempt; a
// message with attributes but no data reaches the caller with an empty
// payload. Nothing is lost: every message read is in exactly one output.
func TestReprocessMalformedDeadLetters(t *testing.T) {
	ps := emulator(t, "dlq")
	malformed := []string{"", "-1", "1.5", " 2", "2 ", "0x10", "1e3", "99999999999999999999", "٣", "NaN"}
	var msgs []pubsubio.Message
	var wantErrors, wantOK []string
	for i, a := range malformed {
		data := fmt.Sprintf("malformed-%d", i)
		msgs = append(msgs, pubsubio.Message{Data: []byte(data), Attributes: map[string]string{AttrAttempts: a, AttrMessageID: "orig-" + data}})
		wantErrors = append(wantErrors, data)
	}
	for _, a := range []string{"+2", "03", "0"} {
		data := "counted-" + a
		msgs = append(msgs, pubsubio.Message{Data: []byte(data), Attributes: map[string]string{AttrAttempts: a}})
		wantOK = append(wantOK, data)
	}
	msgs = append(msgs,
		pubsubio.Message{Data: []byte("no-attributes")},
		pubsubio.Message{Data: []byte("\xff\xfe binary"), Attributes: map[string]string{AttrAttempts: "1"}},
		pubsubio.Message{Attributes: map[string]string{AttrAttempts: "1", "note": "no data"}})
	wantOK = append(wantOK, "no-attributes", "\xff\xfe binary")
	wantErrors = append(wantErrors, "")
	if _, err := pubsubadmin.PublishMessages(context.Background(), project, "dlq", ps.Addr, msgs); err != nil {
		t.Fatal(err)
	}

	o := baseOptions(t)
	o.Reprocess = true
	o.Subscription = "dlq-sub"
	o.IdleTimeout = time.Second
	o.Caller = "echo"
	o.PubSubHost = ps.Addr
	sum := run(t, o)
	if sum.Reprocessed != int64(len(msgs)) || sum.Errors != int64(len(wantErrors)) || sum.Success != int64(len(wantOK)) {
		t.Errorf("summary %+v: want %d read, %d errors, %d successes", sum, len(msgs), len(wantErrors), len(wantOK))
	}
	lines := outputLines(t, o.OutputPrefix)
	checkConservation(t, lines, sum, append(append([]string(nil), wantErrors...), wantOK...))
	for _, l := range lines[OutErrors] {
		in := inputOf(t, l)
		if in == "" {
			if l["error"] != "pipeline: empty payload" {
				t.Errorf("empty payload's error line %v", l)
			}
			continue
		}
		var i int
		if _, err := fmt.Sscanf(in, "malformed-%d", &i); err != nil {
			t.Errorf("error line for %q, want only malformed ones", in)
			continue
		}
		want := fmt.Sprintf(`malformed "attempts" attribute %q`, malformed[i])
		if errText, _ := l["error"].(string); !strings.Contains(errText, want) || l["message_id"] != "orig-"+in {
			t.Errorf("error line %v: want error containing %s and message_id orig-%s", l, want, in)
		}
	}
	if left, err := pubsubadmin.Drain(context.Background(), project, "dlq-sub", ps.Addr); err != nil || len(left) != 0 {
		t.Errorf("dead-letter subscription not drained: %d left, %v", len(left), err)
	}
}

// TestMaxPayloadCountsThePayload: --max_payload_bytes measures the payload
// itself, not the element wrapped around it (a 38-byte line passes a
// 100-byte limit).
func TestMaxPayloadCountsThePayload(t *testing.T) {
	line := `{"id":1,"text":"thirty-eight bytes!"}`
	o := baseOptions(t)
	o.Input = writeInput(t, []string{line, strings.Repeat("x", 101)})
	o.Caller = "echo"
	o.MaxPayload = 100
	sum := run(t, o)
	if sum.Success != 1 || sum.Errors != 1 || sum.Total() != 2 {
		t.Errorf("summary %+v: want the short line to succeed and the 101-byte one to fail", sum)
	}
}

// TestInputFormatJSONL: with --input_format=jsonl a line that is not JSON
// goes to errors with a clear message and no call; valid lines are sent.
func TestInputFormatJSONL(t *testing.T) {
	o := baseOptions(t)
	o.Input = writeInput(t, []string{`{"ok":1}`, `{"truncated":`, `plain text`, `[1,2]`})
	o.Caller = "echo"
	o.InputFormat = "jsonl"
	sum := run(t, o)
	if sum.Success != 2 || sum.Errors != 2 {
		t.Errorf("summary %+v: want 2 successes and 2 errors", sum)
	}
	for _, l := range readLines(t, o.OutputPrefix, OutErrors) {
		if e, _ := l["error"].(string); !strings.HasPrefix(e, "pipeline: malformed JSON line (--input_format=jsonl): ") {
			t.Errorf("error line %v", l)
		}
	}
}
