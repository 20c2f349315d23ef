package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLineFn: "\r\n" ends a line as "\n" does; the line end is never part
// of the payload and empty lines are not elements.
func TestLineFn(t *testing.T) {
	tests := []struct {
		line string // as textio emits it: split at "\n", "\r" kept
		want []string
	}{
		{"a", []string{"a"}},
		{"a\r", []string{"a"}},
		{"", nil},
		{"\r", nil},
		{"a\rb", []string{"a\rb"}},
		{"a\r\r", []string{"a\r"}},
		{" \t", []string{" \t"}},
	}
	for _, tc := range tests {
		var got []string
		lineFn{}.ProcessElement(tc.line, func(e Element) { got = append(got, string(e.Data)) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("line %q: got payloads %q, want %q", tc.line, got, tc.want)
		}
	}
}

// TestReadFilesCRLF runs files with Windows line ends through the pipeline
// on Prism: every payload is the line without "\r", blank CRLF lines are
// skipped as blank LF lines are, and the outputs account for every line.
func TestReadFilesCRLF(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		format string
		want   []string
	}{
		{
			name: "CRLF text",
			file: "first\r\n\r\nsecond line\r\n\r\n\r\nin\rside\r\nlast",
			want: []string{"first", "second line", "in\rside", "last"},
		},
		{
			name: "LF and CRLF mixed",
			file: "a\n\r\nb\r\n\nc\n\r\n",
			want: []string{"a", "b", "c"},
		},
		{
			name:   "CRLF jsonl",
			file:   "{\"id\":1}\r\n\r\n{\"id\":2}\r\n\r\n",
			format: "jsonl",
			want:   []string{`{"id":1}`, `{"id":2}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.txt")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			o := baseOptions(t)
			o.Input = path
			o.InputFormat = tc.format
			o.Caller = "echo"
			sum := run(t, o)
			lines := outputLines(t, o.OutputPrefix)
			checkConservation(t, lines, sum, tc.want)
			var got []string
			for _, l := range lines[OutSuccess] {
				got = append(got, inputOf(t, l))
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("success payloads (-want +got):\n%s", diff)
			}
			if sum.Success != int64(len(tc.want)) || sum.Total() != int64(len(tc.want)) {
				t.Errorf("summary %+v: want %d successes of %d", sum, len(tc.want), len(tc.want))
			}
		})
	}
}
