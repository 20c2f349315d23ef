package quotabench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Summary is the table a beamthrottle process prints when it ends.
type Summary struct {
	Success, ClientThrottled, ServerThrottled, Errors, Total int64
	// AccountedFor is set when the process said every input element was
	// accounted for, and Mismatch when it said some were not.
	AccountedFor, Mismatch bool
}

// parseSummary reads the summary table from a beamthrottle process's
// standard output (report.WriteSummary). ok is false if there was
// none: the process did not end normally.
func parseSummary(stdout string) (s Summary, ok bool) {
	rows := map[string]*int64{
		"success": &s.Success, "client_throttled": &s.ClientThrottled,
		"server_throttled": &s.ServerThrottled, "errors": &s.Errors, "total": &s.Total,
	}
	for line := range strings.Lines(stdout) {
		f := strings.Fields(line)
		switch {
		case len(f) >= 1 && f[0] == "MISMATCH:":
			s.Mismatch, ok = true, true
		case len(f) >= 5 && f[0] == "all" && strings.Join(f[2:], " ") == "input elements accounted for":
			s.AccountedFor, ok = true, true
		case len(f) == 2 && rows[f[0]] != nil:
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				*rows[f[0]] = n
				ok = ok || f[0] == "total"
			}
		}
	}
	return s, ok
}

// Outputs counts the lines of a process's output files.
type Outputs struct {
	// Lines counts them all, Distinct the distinct inputs among them (the
	// generator's payloads are unique, so a duplicate shows as Distinct <
	// Lines).
	Lines, Distinct int
	// ByOutcome counts the lines per output (success, client_throttled,
	// ...), from the files' names.
	ByOutcome map[string]int
}

// countOutputs reads the JSONL files <dir>/<outcome>-<id>.jsonl that a
// process wrote with --output_prefix=<dir>/, and counts their lines and
// their distinct inputs (each line's "input").
func countOutputs(dir string) (Outputs, error) {
	o := Outputs{ByOutcome: map[string]int{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return o, err
	}
	seen := map[string]bool{}
	for _, f := range files {
		outcome, _, _ := strings.Cut(filepath.Base(f), "-")
		if err := eachLine(f, func(line []byte) error {
			var l struct {
				Input *string `json:"input"`
			}
			if err := json.Unmarshal(line, &l); err != nil || l.Input == nil {
				return fmt.Errorf("quotabench: %s: a line without an input: %.80q", f, line)
			}
			o.Lines++
			o.ByOutcome[outcome]++
			seen[*l.Input] = true
			return nil
		}); err != nil {
			return o, err
		}
	}
	o.Distinct = len(seen)
	return o, nil
}

// eachLine calls fn with each non-empty line of the file at path.
func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// conserved reports whether a process of want input elements accounted
// for each exactly once: its summary adds up to want, and says that all
// were accounted for if the process counted its input (counted: a bounded
// source; the size of a subscription's input only the harness knows), and
// its output files hold want lines, as many per output as the summary
// counts, each a distinct payload.
func conserved(want int, s Summary, ok, counted bool, o Outputs) bool {
	return ok && (s.AccountedFor || !counted) && !s.Mismatch && s.Total == int64(want) &&
		s.Success+s.ClientThrottled+s.ServerThrottled+s.Errors == s.Total &&
		o.Lines == want && o.Distinct == want &&
		int64(o.ByOutcome["success"]) == s.Success &&
		int64(o.ByOutcome["client_throttled"]) == s.ClientThrottled &&
		int64(o.ByOutcome["server_throttled"]) == s.ServerThrottled &&
		int64(o.ByOutcome["errors"]) == s.Errors
}
