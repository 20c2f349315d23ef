package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

func TestMain(m *testing.M) {
	code := ptest.MainRetWithDefault(m, "prism")
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// TestRejectsBadFlags: wrong flag values are rejected at start with a
// message naming the flag.
func TestRejectsBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "requests.jsonl")
	empty := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--k=-1"}, "--k:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--batch_size=0"}, "--batch_size:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--window=weekly"}, "--window:"},
		{[]string{"--generate=10", "--url=ftp://x", "--output_prefix=o/"}, "--url:"},
		{[]string{"--url=http://x", "--output_prefix=o/"}, "--input:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--throttle_mode=fast"}, "--throttle_mode:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--caller=nope"}, "--caller:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--throttle_scope=process"}, "--throttle_scope:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=memcached"}, "--quota_backend:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=local"}, "--quota_rate:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=local", "--quota_rate=9/s", "--quota_address=h:1"}, "--quota_address: not used"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=redis", "--quota_rate=600/m"}, "--quota_address:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=redis", "--quota_address=localhost", "--quota_rate=600/m"}, "--quota_address: want host:port"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=redis", "--quota_address=localhost:6379", "--quota_rate=600 a minute"}, "--quota_rate:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=redis", "--quota_address=localhost:6379"}, "--quota_rate:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=envoy", "--quota_address=localhost:8081"}, "--quota_domain:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=envoy", "--quota_address=localhost:8081", "--quota_domain=d", "--quota_descriptors=api"}, "--quota_descriptors:"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--quota_backend=redis", "--quota_address=localhost:6379", "--quota_rate=10/s", "--quota_fail=maybe"}, "--quota_fail:"},
		{[]string{"--generate=10", "--url=http://x"}, "--output_prefix:"},
		{[]string{"--reprocess", "--url=http://x", "--output_prefix=o/"}, "--subscription:"},
		{[]string{"--input=" + missing, "--url=http://x", "--output_prefix=o/"}, `--input: no file matches "` + missing + `"`},
		{[]string{"--input=" + filepath.Join(empty, "*.jsonl"), "--url=http://x", "--output_prefix=o/"}, "--input: no file matches"},
		{[]string{"--generate=10", "--url=http://x", "--output_prefix=o/", "--header_env=Authorization=BEAMTHROTTLE_UNSET_TOKEN"},
			"--header_env: Authorization=BEAMTHROTTLE_UNSET_TOKEN: environment variable BEAMTHROTTLE_UNSET_TOKEN is not set"},
	}
	t.Setenv("BEAMTHROTTLE_UNSET_TOKEN", "")
	os.Unsetenv("BEAMTHROTTLE_UNSET_TOKEN")
	t.Chdir(t.TempDir()) // a run that should have been refused writes here
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			o := pipeline.RegisterFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			_, err := runPipeline(context.Background(), *o, nil, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// TestRejectsUnknownRunner: Beam exits the process on an unknown --runner
// once the job is built; the binary refuses it at start, naming the flag and
// the runners it has.
func TestRejectsUnknownRunner(t *testing.T) {
	old := flag.Lookup("runner").Value.String()
	if err := flag.Set("runner", "nosuchrunner"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("runner", old)
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	o := pipeline.RegisterFlags(fs)
	if err := fs.Parse([]string{"--generate=10", "--url=http://x", "--output_prefix=o/"}); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	_, err := runPipeline(context.Background(), *o, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `--runner: no runner "nosuchrunner"`) || !strings.Contains(err.Error(), "dataflow") {
		t.Errorf("got %v, want an error naming --runner and listing the runners", err)
	}
}

// TestMakeRun: `make run` says it is building before the build (minutes on
// a fresh machine), builds the binary and runs the demo with it.
func TestMakeRun(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on the PATH")
	}
	out, err := exec.Command(mk, "-n", "-C", "../..", "--no-print-directory", "run").Output()
	if err != nil {
		t.Fatalf("make -n run: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("make -n run: got %d commands, want 3 (say, build, run):\n%s", len(lines), out)
	}
	if !strings.HasPrefix(lines[0], "echo ") || !strings.Contains(lines[0], "first time") {
		t.Errorf("first command %q, want an echo saying the first build takes long", lines[0])
	}
	build := strings.Fields(lines[1])
	if len(build) != 5 || build[1] != "build" || build[2] != "-o" || build[4] != "./cmd/beamthrottle" {
		t.Fatalf("second command %q, want go build -o BIN ./cmd/beamthrottle", lines[1])
	}
	if want := "./" + filepath.Clean(build[3]) + " --demo"; lines[2] != want {
		t.Errorf("third command %q, want %q", lines[2], want)
	}
}
