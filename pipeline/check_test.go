package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck runs the start-up checks for each kind of runner against real
// files and the real environment.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling.link")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BEAMTHROTTLE_TEST_TOKEN", "Bearer 0123456789")
	t.Setenv("BEAMTHROTTLE_TEST_EMPTY", "")
	t.Setenv("BEAMTHROTTLE_TEST_UNSET", "") // restored after the test
	os.Unsetenv("BEAMTHROTTLE_TEST_UNSET")

	local := startEnv{Runner: "prism"}
	dataflow := startEnv{Runner: "dataflow"}
	tests := []struct {
		name      string
		env       startEnv
		input     string
		output    string // --output_prefix
		headerEnv map[string]string
		wantErr   []string // substrings of the error; none: no error
		wantWarn  []string // substrings of the warnings; none: no warning
	}{
		{name: "file", env: local, input: filepath.Join(dir, "a.jsonl")},
		{name: "glob", env: local, input: filepath.Join(dir, "*.jsonl")},
		{name: "default runner", env: startEnv{}, input: filepath.Join(dir, "*.jsonl")},
		{name: "missing file", env: local, input: filepath.Join(dir, "b.jsonl"),
			wantErr: []string{`--input: no file matches "` + filepath.Join(dir, "b.jsonl") + `"`}},
		{name: "glob matching nothing", env: local, input: filepath.Join(dir, "empty", "*.jsonl"),
			wantErr: []string{"--input: no file matches"}},
		{name: "missing directory", env: local, input: filepath.Join(dir, "nodir", "*"),
			wantErr: []string{"--input: no file matches"}},
		{name: "unknown scheme", env: local, input: "s3://bucket/x.jsonl",
			wantErr: []string{"--input:", `"s3"`}},
		{name: "unknown scheme on dataflow", env: dataflow, input: "s3://bucket/x.jsonl",
			wantErr: []string{"--input:", `"s3"`}},
		{name: "local glob matching nothing on dataflow", env: dataflow, input: filepath.Join(dir, "empty", "*.jsonl"),
			wantWarn: []string{"--input: no file matches", "workers of --runner=dataflow"}},
		{name: "direct runner", env: startEnv{Runner: "DirectRunner"}, input: filepath.Join(dir, "b.jsonl"),
			wantErr: []string{"--input: no file matches"}},
		{name: "dot runs nothing", env: startEnv{Runner: "dot"}, input: filepath.Join(dir, "b.jsonl"),
			headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_UNSET"}},

		{name: "input a directory", env: local, input: dir,
			wantErr: []string{`--input: "` + dir + `" is a directory`}},
		{name: "glob matching a directory", env: local, input: filepath.Join(dir, "*"),
			wantErr: []string{`--input: "` + filepath.Join(dir, "empty") + `" is a directory`}},
		{name: "glob matching a file that cannot be read", env: local, input: filepath.Join(dir, "dangling*"),
			wantErr: []string{"--input:", "dangling.link"}},
		{name: "input a directory on dataflow", env: dataflow, input: dir},

		{name: "output prefix", env: local, output: filepath.Join(dir, "out") + "/"},
		{name: "output prefix with a file name part", env: local, output: filepath.Join(dir, "out", "run1-")},
		{name: "output prefix under a file", env: local, output: filepath.Join(dir, "a.jsonl", "out") + "/",
			wantErr: []string{`--output_prefix: cannot write under "` + filepath.Join(dir, "a.jsonl", "out") + `/"`}},
		{name: "output prefix of unknown scheme", env: local, output: "s3://bucket/out/",
			wantErr: []string{"--output_prefix:", `"s3"`}},
		{name: "output prefix of unknown scheme on dataflow", env: dataflow, output: "s3://bucket/out/",
			wantErr: []string{"--output_prefix:", `"s3"`}},
		{name: "local output prefix on dataflow", env: dataflow, output: filepath.Join(dir, "a.jsonl", "out") + "/"},
		{name: "input and output both wrong", env: local, input: dir, output: filepath.Join(dir, "a.jsonl") + "/",
			wantErr: []string{"--input:", "--output_prefix:"}},

		{name: "header_env set", env: local, headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_TOKEN"}},
		{name: "header_env unset", env: local, headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_UNSET"},
			wantErr: []string{"--header_env: Authorization=BEAMTHROTTLE_TEST_UNSET", "is not set"}},
		{name: "header_env empty", env: local, headerEnv: map[string]string{"X-Key": "BEAMTHROTTLE_TEST_EMPTY"},
			wantErr: []string{"--header_env: X-Key=BEAMTHROTTLE_TEST_EMPTY", "is empty"}},
		{name: "header_env unset on dataflow", env: dataflow, headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_UNSET"},
			wantWarn: []string{"--header_env: Authorization=BEAMTHROTTLE_TEST_UNSET", "workers of --runner=dataflow"}},
		{name: "header_env unset on a job server", env: startEnv{Runner: "universal", Endpoint: "localhost:8099"},
			headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_UNSET"},
			wantWarn:  []string{"--header_env: Authorization"}},
		{name: "header_env unset on a job server with loopback workers",
			env:       startEnv{Runner: "flink", Endpoint: "localhost:8099", EnvironmentType: "LOOPBACK"},
			headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_UNSET"},
			wantErr:   []string{"--header_env: Authorization", "--runner=flink run in this process"}},
		{name: "header_env unset on a prism job server with docker workers",
			env:       startEnv{Runner: "prism", Endpoint: "localhost:8073", EnvironmentType: "docker"},
			headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_UNSET"},
			wantWarn:  []string{"--header_env: Authorization"}},
		{name: "both wrong", env: local, input: filepath.Join(dir, "b.jsonl"),
			headerEnv: map[string]string{"Authorization": "BEAMTHROTTLE_TEST_UNSET"},
			wantErr:   []string{"--input: no file matches", "--header_env: Authorization"}},

		{name: "unknown runner", env: startEnv{Runner: "nosuchrunner"},
			wantErr: []string{`--runner: no runner "nosuchrunner"`, "prism", "dataflow", "universal", "flink", "spark", "DataflowRunner"}},
		{name: "runner names are case-sensitive", env: startEnv{Runner: "Dataflow"},
			wantErr: []string{`--runner: no runner "Dataflow"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Input: tc.input, OutputPrefix: tc.output, CallerOptions: CallerOptions{HeaderEnv: tc.headerEnv}}
			var warn bytes.Buffer
			err := o.check(context.Background(), tc.env, &warn)
			switch {
			case len(tc.wantErr) == 0 && err != nil:
				t.Errorf("got error %v, want none", err)
			case len(tc.wantErr) > 0 && err == nil:
				t.Errorf("got no error, want one with %q", tc.wantErr)
			case err != nil:
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("got error %q, want it to contain %q", err, want)
					}
				}
			}
			if len(tc.wantWarn) == 0 && warn.Len() > 0 {
				t.Errorf("got warnings %q, want none", warn.String())
			}
			for _, want := range tc.wantWarn {
				if !strings.Contains(warn.String(), want) {
					t.Errorf("got warnings %q, want them to contain %q", warn.String(), want)
				}
			}
		})
	}
	// The write checks leave nothing behind.
	if left, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(left) != 0 {
		t.Errorf("files left under the output prefixes: %q", left)
	}
}
