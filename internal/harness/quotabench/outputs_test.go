package quotabench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/report"
	"github.com/beamthrottle/beamthrottle/pipeline"
)

// table is what cmd/beamthrottle prints for s and want input elements.
func table(s pipeline.Summary, want int64) string {
	var b strings.Builder
	report.WriteSummary(&b, s, want)
	return b.String()
}

func TestParseSummary(t *testing.T) {
	tests := []struct {
		name   string
		stdout string
		want   Summary
		wantOK bool
	}{{
		name:   "accounted for",
		stdout: "progress: 5/6 done\n" + table(pipeline.Summary{Success: 3, ClientThrottled: 2, ServerThrottled: 1}, 6),
		want:   Summary{Success: 3, ClientThrottled: 2, ServerThrottled: 1, Total: 6, AccountedFor: true},
		wantOK: true,
	}, {
		name:   "mismatch",
		stdout: table(pipeline.Summary{Success: 3, Errors: 1}, 6),
		want:   Summary{Success: 3, Errors: 1, Total: 4, Mismatch: true},
		wantOK: true,
	}, {
		name:   "no table: the process did not end normally",
		stdout: "beamthrottle: something broke\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseSummary(tt.stdout)
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseSummary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountOutputs(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"success-0a.jsonl":          `{"input":"{\"i\":0}","response":{}}` + "\n" + `{"input":"{\"i\":1}","response":{}}` + "\n",
		"success-0b.jsonl":          `{"input":"{\"i\":1}","response":{}}` + "\n\n",
		"client_throttled-1c.jsonl": `{"input":"{\"i\":2}","error":"throttled"}` + "\n",
		"notes.txt":                 "not an output\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := countOutputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Outputs{Lines: 4, Distinct: 3, ByOutcome: map[string]int{"success": 3, "client_throttled": 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("countOutputs (-want +got):\n%s", diff)
	}

	if err := os.WriteFile(filepath.Join(dir, "errors-2.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := countOutputs(dir); err == nil {
		t.Errorf("countOutputs with a line without an input: no error, want one")
	}
}

func TestConserved(t *testing.T) {
	good := Summary{Success: 3, ClientThrottled: 1, Total: 4, AccountedFor: true}
	files := Outputs{Lines: 4, Distinct: 4, ByOutcome: map[string]int{"success": 3, "client_throttled": 1}}
	subscription := Summary{Success: 3, ClientThrottled: 1, Total: 4}
	tests := []struct {
		name string
		s    Summary
		ok   bool
		o    Outputs
		// sub: the input was a subscription, not counted by the process.
		sub  bool
		want bool
	}{
		{"all there", good, true, files, false, true},
		{"a subscription's, all there", subscription, true, files, true, true},
		{"a subscription's, a line missing", subscription, true, Outputs{Lines: 3, Distinct: 3, ByOutcome: map[string]int{"success": 3}}, true, false},
		{"a subscription's, fewer than published", Summary{Success: 3, Total: 3}, true, Outputs{Lines: 3, Distinct: 3, ByOutcome: map[string]int{"success": 3}}, true, false},
		{"a subscription's, a mismatch said", Summary{Success: 3, ClientThrottled: 1, Total: 4, Mismatch: true}, true, files, true, false},
		{"no summary", good, false, files, false, false},
		{"summary without the accounted-for line", subscription, true, files, false, false},
		{"a line missing", good, true, Outputs{Lines: 3, ByOutcome: map[string]int{"success": 3}}, false, false},
		{"a line in the wrong output", good, true, Outputs{Lines: 4, ByOutcome: map[string]int{"success": 4}}, false, false},
		{"a line too many", good, true, Outputs{Lines: 5, Distinct: 4, ByOutcome: map[string]int{"success": 4, "client_throttled": 1}}, false, false},
		{"a payload twice, one missing", good, true, Outputs{Lines: 4, Distinct: 3, ByOutcome: map[string]int{"success": 3, "client_throttled": 1}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := conserved(4, tt.s, tt.ok, !tt.sub, tt.o); got != tt.want {
				t.Errorf("conserved = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	got, err := Select("envoy, none")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"none", "envoy"}, names); diff != "" {
		t.Errorf("Select (-want +got):\n%s", diff)
	}
	if all, _ := Select(""); len(all) != len(Scenarios) {
		t.Errorf("Select(\"\") = %d scenarios, want %d", len(all), len(Scenarios))
	}
	if _, err := Select("nope"); err == nil {
		t.Errorf("Select(nope): no error, want one")
	}
}

// TestElements checks that a process generates whole ticks of the
// streaming generator, rate × duration rounded up.
func TestElements(t *testing.T) {
	tests := []struct {
		set  Settings
		want int
	}{
		{Settings{}, 1200}, // 30/s for 40 s, 3 a tick
		{Settings{Capacity: 70, Duration: 10e9}, 352}, // 35/s: 4 a tick, 350 rounded up
		{Settings{Capacity: 50, Duration: 10e9}, 252}, // 25/s: 3 a tick, 250 rounded up
	}
	for _, tt := range tests {
		if got := tt.set.withDefaults().elements(Scenario{}); got != tt.want {
			t.Errorf("elements(%+v) = %d, want %d", tt.set, got, tt.want)
		}
	}
}
