package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestBatchedCallsWithTokenCosts: JSONL lines in calls of 20 (the http
// caller's JSON-array form) to a quota server that fails some items one by
// one and counts each request's tokens; --cost=json:tokens charges each
// element its tokens. Every line ends in exactly one output file, the items
// the server failed (and only they) are errors, and a line whose cost
// cannot be read is an error with a message saying why, never sent.
func TestBatchedCallsWithTokenCosts(t *testing.T) {
	srv, err := testserver.NewServer(testserver.Config{CostField: "tokens", ItemErrorRate: 0.1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	var b strings.Builder
	const n = 300
	var tokens int64
	for i := range n {
		tokens += int64(i%100 + 1)
		fmt.Fprintf(&b, `{"line":%d,"tokens":%d}`+"\n", i, i%100+1)
	}
	b.WriteString(`{"line":"no tokens"}` + "\n")
	b.WriteString(`{"line":"bad","tokens":-3}` + "\n")
	if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	o := baseOptions(t)
	o.Input = filepath.Join(dir, "in.jsonl")
	o.CallerOptions.URL = srv.Endpoint()
	o.CallerOptions.ItemStatusField = "status"
	o.ItemsPerCall, o.Cost, o.BatchSize = 20, "json:tokens", 100
	sum := run(t, o)

	st := srv.Handler.Stats()
	errs := readLines(t, o.OutputPrefix, OutErrors)
	var costErrs int
	for _, l := range errs {
		if msg := l["error"].(string); strings.Contains(msg, "throttle: cost:") {
			costErrs++
		}
	}
	if costErrs != 2 {
		t.Errorf("%d error lines about a cost, want the 2 lines without a readable one: %v", costErrs, errs)
	}
	if sum.Success != st.Items-st.ItemErrors || sum.Errors != st.ItemErrors+2 || sum.Success+sum.Errors != n+2 {
		t.Errorf("summary %+v; server %d items, %d failed: want successes = items - failed, errors = failed + 2", sum, st.Items, st.ItemErrors)
	}
	if st.Items != n || st.Accepted > int64(n/20+2*o.Groups) {
		t.Errorf("server: %d items in %d calls, want %d items in about %d calls", st.Items, st.Accepted, n, n/20)
	}
	if st.AcceptedCost != tokens {
		t.Errorf("server counted %d tokens, want %d", st.AcceptedCost, tokens)
	}
}

// TestBatchNeedsBatchCaller: --items_per_call with a caller that has no
// batch form is refused when the pipeline is built, naming the flag.
func TestBatchNeedsBatchCaller(t *testing.T) {
	o := baseOptions(t)
	o.Generate, o.Caller, o.ItemsPerCall = 10, "always429", 5
	_, s := beam.NewPipelineWithRoot()
	if _, err := Build(s, o); err == nil || !strings.HasPrefix(err.Error(), "--items_per_call: caller \"always429\" has no batch form") {
		t.Errorf("Build: got %v, want --items_per_call refused", err)
	}
}
