package report

import (
	"strings"
	"testing"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

// TestWriteSummary: the summary table shows the reprocessing rows only for a
// reprocessing run, re-reads of its own dead letters apart from the
// messages read, and whether every input is accounted for.
func TestWriteSummary(t *testing.T) {
	tests := []struct {
		name     string
		sum      pipeline.Summary
		want     int64
		contains []string
		excludes []string
	}{
		{"plain run", pipeline.Summary{Success: 3, Errors: 1}, 4,
			[]string{"success 3", "total 4", "all 4 input elements accounted for"},
			[]string{"parked", "reprocessed", "read again", "interrupted"}},
		{"reprocessing its own dead letters", pipeline.Summary{Parked: 285, Reprocessed: 285, Reread: 270}, 285,
			[]string{"parked 285", "total 285", "reprocessed (read) 285", "read again (own dead letters) 270", "all 285 input elements accounted for"},
			nil},
		{"mismatch", pipeline.Summary{Success: 1}, 2, []string{"MISMATCH: 2 input elements, 1 accounted for"}, nil},
		{"interrupted", pipeline.Summary{Success: 5, ClientThrottled: 7, Interrupted: 6}, 12,
			[]string{"client_throttled 7", "total 12", "not called (interrupted) 6", "all 12 input elements accounted for"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			WriteSummary(&b, tc.sum, tc.want)
			table := b.String()
			lines := map[string]bool{} // lines with single spaces
			for _, l := range strings.Split(table, "\n") {
				lines[strings.Join(strings.Fields(l), " ")] = true
			}
			for _, s := range tc.contains {
				if !lines[s] {
					t.Errorf("table\n%s\nwant a line %q", table, s)
				}
			}
			for _, s := range tc.excludes {
				if strings.Contains(table, s) {
					t.Errorf("table\n%s\nwant no %q", table, s)
				}
			}
		})
	}
}
