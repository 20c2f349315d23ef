package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestPathsRefusedBeforeAnyCall runs the binary with an --input or an
// --output_prefix it cannot use: it exits non-zero with a message naming
// the flag, and the API saw no request (the paths are checked at start, not
// when Beam first opens them).
func TestPathsRefusedBeforeAnyCall(t *testing.T) {
	bin := buildBinary(t)
	srv, err := testserver.NewServer(testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	input := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(input, []byte("{\"n\":1}\n{\"n\":2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		input, output string
		want          string
	}{
		{"input a directory", dir, filepath.Join(dir, "out") + "/", "--input: "},
		{"output prefix under a file", input, filepath.Join(input, "out") + "/", "--output_prefix: cannot write"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--input="+tc.input, "--url="+srv.Endpoint(), "--output_prefix="+tc.output)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitError {
				t.Fatalf("got %v, want exit status %d\n%s", err, exitError, tail(out))
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output\n%s\nwant it to name %q", tail(out), tc.want)
			}
			if lines := strings.Count(strings.TrimSpace(string(out)), "\n") + 1; lines > 3 {
				t.Errorf("%d lines of output, want the refusal alone", lines)
			}
			if st := srv.Handler.Stats(); st.Accepted+st.Rejected+st.Errors+st.TooLarge != 0 {
				t.Errorf("the API saw requests: %+v, want none", st)
			}
		})
	}
}
