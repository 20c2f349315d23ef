package pipeline

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/beamthrottle/beamthrottle/internal/testenv/pubsubadmin"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// beamLogger is a beam/log Logger writing to w what Beam logs by default
// (--log_level=info): everything but debug.
type beamLogger struct{ w io.Writer }

func (l beamLogger) Log(_ context.Context, sev beamlog.Severity, _ int, msg string) {
	if sev >= beamlog.SevInfo {
		fmt.Fprintf(l.w, "beam log (severity %d): %s\n", sev, msg)
	}
}

// captureLogs redirects, until stop is called, everything a run logs in
// this process to a buffer:
//   - the default slog logger, at debug level: Prism logs through it,
//     including every log line of the SDK workers (they run in-process and
//     send their beam/log output to Prism), and the standard log package
//     writes through it;
//   - beam/log on the launching side (job submission and state), at info
//     level and above, until a worker replaces it with its remote logger;
//   - whatever is written to os.Stdout and os.Stderr.
//
// stop restores them, except beam/log, which is left logging through slog
// as it does by default (it has no getter for the logger it had).
func captureLogs(t *testing.T) (logs *lockedBuffer, stop func()) {
	t.Helper()
	logs = &lockedBuffer{}
	oldLogger, oldStdout, oldStderr := slog.Default(), os.Stdout, os.Stderr
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	beamlog.SetLogger(beamLogger{logs})
	var wg sync.WaitGroup
	var pipes []*os.File
	redirect := func(f **os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		*f = w
		pipes = append(pipes, w)
		wg.Go(func() {
			io.Copy(logs, r)
			r.Close()
		})
	}
	redirect(&os.Stdout)
	redirect(&os.Stderr)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			os.Stdout, os.Stderr = oldStdout, oldStderr
			slog.SetDefault(oldLogger)
			beamlog.SetLogger(&beamlog.Structural{})
			for _, w := range pipes {
				w.Close()
			}
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return logs, stop
}

// TestSecretsNeverLeak plants header values for the HTTP caller, given as
// the binary's flags (--header, and --header_env through an environment
// variable), and runs the pipeline against a backend that fails in every
// way (429, 500, 503, 400, timeouts, closed connections) and echoes the
// request's headers in its error bodies. None of the values may appear in
// any output file, dead-letter message (data or attributes), log line
// (Prism's and the SDK workers', at debug level, and anything written to
// stderr), metric, progress line or summary, neither as they are nor
// base64-encoded.
//
// Beam's launcher logs at its default level (info). At debug level it also
// prints the whole pipeline proto, where --header values, being part of the
// job graph (the serialised caller), appear base64-encoded; --header_env
// values never do, since workers read them from their environment.
func TestSecretsNeverLeak(t *testing.T) {
	const (
		bearer = "planted-bearer-8d1c55e0a4f2"
		direct = "planted-direct-3b9f07c6d1e8"
		apiKey = "planted-apikey-f61a2e94b7c3"
		envVar = "BEAMTHROTTLE_TEST_API_KEY"
		n      = 120
	)
	secrets := []string{bearer, direct, apiKey}
	t.Setenv(envVar, apiKey)
	backend := newFaultyBackend(t)
	ps := emulator(t, "dlq")
	out := t.TempDir()

	args := []string{
		"--name=secrets", "--generate=" + fmt.Sprint(n), "--url=" + backend.URL + "/api",
		"--header=Authorization: Bearer " + bearer, "--header=X-Direct: " + direct, "--header_env=X-Api-Key=" + envVar,
		"--groups=2", "--batch_size=50", "--batch_interval=50ms", "--call_timeout=200ms", "--calls_in_flight=10",
		"--strategy=retry", "--max_attempts=2",
		"--dead_letter_topic=dlq", "--dead_letter_errors", "--pubsub_emulator=" + ps.Addr, "--pubsub_project=" + project,
		"--output_prefix=" + out + "/",
	}
	o, sum, msgs, haystacks := runForSecrets(t, args, ps)

	for where, text := range haystacks {
		for _, secret := range secrets {
			if found, depth := findEncoded([]byte(text), []byte(secret), 3); found != "" {
				t.Errorf("%s leaks planted secret %q (under %d layers of base64): …%s…", where, secret, depth, found)
			}
		}
	}

	// The test is not vacuous: the backend received every value, its error
	// bodies echoing them were redacted, the run failed in every way and its
	// workers' log lines were captured.
	for name, want := range map[string]string{"Authorization": "Bearer " + bearer, "X-Direct": direct, "X-Api-Key": apiKey} {
		if got := backend.headerValues(name); len(got) == 0 || got[0] != want {
			t.Errorf("backend got %s values %q, want %q", name, got, want)
		}
	}
	var redacted int
	for _, l := range readLines(t, o.OutputPrefix, OutErrors) {
		if strings.Contains(l["error"].(string), "<redacted>") {
			redacted++
		}
	}
	if redacted == 0 {
		t.Errorf("no error line shows a redacted header: the backend's echo did not reach the records")
	}
	if !strings.Contains(haystacks["monitor"], "<redacted>") {
		t.Errorf("the run's Monitor was told of no error showing a redacted header: %s", haystacks["monitor"])
	}
	if sum.Total() != n || sum.Success == 0 || sum.ServerThrottled == 0 || sum.Errors == 0 || len(msgs) == 0 {
		t.Errorf("summary %+v, %d dead letters: want %d elements in all outcomes, some dead-lettered", sum, len(msgs), n)
	}
	for _, want := range []string{"[SDK] throttle: caller", "starting job-", "Submitted job: job-"} {
		if !strings.Contains(haystacks["logs"], want) {
			t.Errorf("captured logs lack %q: the capture missed the run's logs", want)
		}
	}
}

// runForSecrets runs the binary's pipeline for args (its flags, with a
// dead-letter topic "dlq" on ps) and returns its options, summary and dead
// letters, and everything it produced, by where it came from: the logs
// (see captureLogs), the summary, what its Monitor was told (the call
// errors a progress display could show), the metrics, every output file and
// every dead-letter message.
func runForSecrets(t *testing.T, args []string, ps *pstest.Server) (*Options, Summary, []pubsubio.Message, map[string]string) {
	t.Helper()
	fset := flag.NewFlagSet("beamthrottle", flag.ContinueOnError)
	o := RegisterFlags(fset)
	if err := fset.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}

	logs, stop := captureLogs(t)
	mon := newCountingMonitor()
	defer attachMonitor(mon, o, "secrets")()
	p, s := beam.NewPipelineWithRoot()
	_, err := Build(s, *o)
	var res beam.PipelineResult
	if err == nil {
		res, err = beamx.RunWithMetrics(context.Background(), p)
	}
	stop()
	if err != nil {
		t.Fatalf("run: %v", err)
	}

	haystacks := map[string]string{"logs": logs.String()}
	sum := SummaryFrom(res)
	haystacks["summary"] = fmt.Sprintf("%+v", sum)
	mon.mu.Lock()
	haystacks["monitor"] = fmt.Sprintf("%v %v", slices.Sorted(maps.Keys(mon.errTexts)), mon.counts)
	mon.mu.Unlock()
	var metrics strings.Builder
	all := res.Metrics().AllMetrics()
	for _, c := range all.Counters() {
		fmt.Fprintf(&metrics, "%+v %d\n", c.Key, c.Result())
	}
	for _, d := range all.Distributions() {
		fmt.Fprintf(&metrics, "%+v %+v\n", d.Key, d.Result())
	}
	for _, g := range all.Gauges() {
		fmt.Fprintf(&metrics, "%+v %+v\n", g.Key, g.Result())
	}
	haystacks["metrics"] = metrics.String()
	err = filepath.WalkDir(strings.TrimSuffix(o.OutputPrefix, "/"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		haystacks[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := pubsubadmin.Drain(context.Background(), project, "dlq-sub", ps.Addr)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		haystacks[fmt.Sprintf("dead letter %d", i)] = fmt.Sprintf("%s %s %v", m.Data, m.ID, m.Attributes)
	}
	return o, sum, msgs, haystacks
}

// base64Run matches runs of base64 text (standard or URL alphabet).
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}`)

// findEncoded looks for secret in text and, up to depth layers down, in
// what the base64 runs of text decode to (at every alignment): serialised
// pipelines and JSON byte fields carry values base64-encoded. It returns
// the neighbourhood of the first occurrence and its depth, or "".
func findEncoded(text, secret []byte, depth int) (string, int) {
	if i := bytes.Index(text, secret); i >= 0 {
		return string(text[max(0, i-100):min(len(text), i+len(secret)+50)]), 0
	}
	if depth == 0 {
		return "", 0
	}
	for _, run := range base64Run.FindAll(text, -1) {
		for off := range 4 {
			chunk := run[off:]
			chunk = chunk[:len(chunk)/4*4]
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				dec, err := enc.DecodeString(string(chunk))
				if err != nil {
					continue
				}
				if found, d := findEncoded(dec, secret, depth-1); found != "" {
					return found, d + 1
				}
			}
		}
	}
	return "", 0
}

// TestEchoedSecretsRedacted runs the binary's pipeline against an API that
// echoes its requests, as httpbin does (headers, URL, query arguments and
// body, in JSON), in every answer: 200 for some elements, 400 and 429 for
// others. The caller is configured with secrets in every place it takes
// them: --header, --header_env, the URL's user info (sent as an
// Authorization: Basic header) and its query. None may appear, as it is or
// base64-encoded, in an output file, a dead-letter message or a log line,
// though the answers quoting them reach the success and error records.
func TestEchoedSecretsRedacted(t *testing.T) {
	const (
		direct   = "planted-direct-2c71e9"
		apiKey   = "planted-apikey-b05f3d"
		user     = "planted-user-6ad214"
		password = "planted-password-e83c07"
		token    = "planted-token-19fa6b"
		envVar   = "BEAMTHROTTLE_TEST_ECHO_KEY"
		n        = 90
	)
	secrets := []string{direct, apiKey, user, password, token,
		base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	t.Setenv(envVar, apiKey)
	var calls atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		var req struct{ ID int }
		json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		switch req.ID % 3 {
		case 1:
			w.WriteHeader(http.StatusBadRequest)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		}
		// Error excerpts are short: the credentials first.
		fmt.Fprintf(w, `{"authorization":%q,"url":%q,"args":`, r.Header.Get("Authorization"), r.URL)
		json.NewEncoder(w).Encode(r.URL.Query())
		fmt.Fprintf(w, `,"headers":`)
		json.NewEncoder(w).Encode(r.Header)
		fmt.Fprintf(w, `,"data":%q}`, body)
	}))
	defer backend.Close()
	ps := emulator(t, "dlq")
	url := strings.Replace(backend.URL, "://", "://"+user+":"+password+"@", 1) + "/anything?token=" + token + "&lang=en"

	o, sum, msgs, haystacks := runForSecrets(t, []string{
		"--name=echo", "--generate=" + fmt.Sprint(n), "--url=" + url,
		"--header=X-Direct: " + direct, "--header_env=X-Api-Key=" + envVar,
		"--groups=2", "--batch_size=50", "--batch_interval=50ms", "--strategy=retry", "--max_attempts=2",
		"--dead_letter_topic=dlq", "--dead_letter_errors", "--pubsub_emulator=" + ps.Addr, "--pubsub_project=" + project,
		"--output_prefix=" + t.TempDir() + "/",
	}, ps)

	for where, text := range haystacks {
		for _, secret := range secrets {
			if found, depth := findEncoded([]byte(text), []byte(secret), 3); found != "" {
				t.Errorf("%s leaks planted secret %q (under %d layers of base64): …%s…", where, secret, depth, found)
			}
		}
	}

	// Every element is accounted for once, the echoes reached the records
	// (redacted), and the dead letters are the failures.
	success, errs := readLines(t, o.OutputPrefix, OutSuccess), readLines(t, o.OutputPrefix, OutErrors)
	throttled := readLines(t, o.OutputPrefix, OutServerThrottled)
	if sum.Total() != n || len(success) != n/3 || len(errs) != n/3 || int64(len(throttled))+sum.ClientThrottled != n/3 {
		t.Errorf("summary %+v, %d success, %d error and %d server-throttled lines: want %d elements, a third in each",
			sum, len(success), len(errs), len(throttled), n)
	}
	if len(msgs) != n-len(success) {
		t.Errorf("%d dead letters, want the %d failures", len(msgs), n-len(success))
	}
	for _, l := range success {
		resp, _ := json.Marshal(l["response"])
		if !strings.Contains(string(resp), `"authorization":"Basic \u003credacted\u003e"`) || !strings.Contains(string(resp), `"lang":["en"]`) {
			t.Errorf("success line %v: want the echo, its credentials redacted", l)
			break
		}
	}
	for _, l := range errs { // a throttled line says "Server returned HTTP response code: 429"
		if !strings.Contains(l["error"].(string), `{"authorization":"Basic <redacted>","url":"/anything?token=<redacted>&lang=en"`) {
			t.Errorf("failure line %v: want the echo, its credentials redacted", l)
			break
		}
	}
	if calls.Load() < n {
		t.Errorf("the backend answered %d calls, want at least %d", calls.Load(), n)
	}
}
