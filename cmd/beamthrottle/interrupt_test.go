package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/pipeline"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestInterruptKeepsFinishedWork sends SIGINT (or SIGTERM) to the binary in
// the middle of a bounded run against a quota-limited API, once some calls
// were accepted. The run stops calling, routes what it still held to the
// throttled outputs, writes every output and its summary, and exits with
// 128 + the signal's number. Nothing finished is lost: every call the API
// accepted is a success line, every input element is in exactly one line,
// and the lines that say the interrupt kept them from a call are as many as
// the summary's "not called" row.
func TestInterruptKeepsFinishedWork(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			const n = 3000
			srv, err := testserver.NewServer(testserver.Config{Quota: 50}) // n would take a minute
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			out := t.TempDir() + "/"
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, fmt.Sprintf("--generate=%d", n), "--url="+srv.Endpoint(), "--output_prefix="+out)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for srv.Handler.Stats().Accepted < 20 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("%d calls accepted in 60 s\n%s", srv.Handler.Stats().Accepted, tail(stderr.Bytes()))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Fatalf("got %v, want exit status %d\nstdout:\n%s\nstderr:\n%s", err, 128+int(sig), stdout.String(), tail(stderr.Bytes()))
			}

			accepted := srv.Handler.Stats().Accepted
			if accepted >= n {
				t.Fatalf("the run made all %d calls before the signal", n)
			}
			lines := map[string]int{}
			inputs := map[string]int{}
			var interrupted int64
			for _, outcome := range []string{pipeline.OutSuccess, pipeline.OutClientThrottled, pipeline.OutServerThrottled, pipeline.OutErrors} {
				files, _ := filepath.Glob(out + outcome + "-*.jsonl")
				for _, f := range files {
					fh, err := os.Open(f)
					if err != nil {
						t.Fatal(err)
					}
					sc := bufio.NewScanner(fh)
					for sc.Scan() {
						var l struct{ Input, Error string }
						if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
							t.Fatalf("%s: %v", f, err)
						}
						lines[outcome]++
						inputs[l.Input]++
						if strings.Contains(l.Error, "the pipeline was interrupted") {
							interrupted++
						}
					}
					fh.Close()
				}
			}
			if int64(lines[pipeline.OutSuccess]) != accepted {
				t.Errorf("%d success lines, want one for each of the %d calls the API accepted", lines[pipeline.OutSuccess], accepted)
			}
			if len(inputs) != n {
				t.Errorf("%d distinct inputs in the outputs, want %d", len(inputs), n)
			}
			for in, k := range inputs {
				if k != 1 {
					t.Errorf("input %s in %d lines, want 1", in, k)
				}
			}
			table := stdout.String()
			m := regexp.MustCompile(`not called \(interrupted\)\s+(\d+)`).FindStringSubmatch(table)
			if m == nil {
				t.Fatalf("stdout:\n%s\nwant the summary table with its \"not called (interrupted)\" row", table)
			}
			if k, _ := strconv.ParseInt(m[1], 10, 64); k != interrupted || k == 0 {
				t.Errorf("the summary says %d elements were not called, the outputs %d; want the same, not 0", k, interrupted)
			}
			if want := fmt.Sprintf("all %d input elements accounted for", n); !strings.Contains(table, want) {
				t.Errorf("stdout:\n%s\nwant %q", table, want)
			}
			if !strings.Contains(stderr.String(), "interrupted: ") {
				t.Errorf("stderr lacks the interrupted line:\n%s", tail(stderr.Bytes()))
			}
			t.Logf("signal after %d accepted calls: %v lines, %d not called", accepted, lines, interrupted)
		})
	}
}
