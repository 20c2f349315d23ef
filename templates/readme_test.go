package templates

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// readmeDataflowMarker precedes, in the repository's README.md, the fenced
// block holding the Dataflow command that TestREADMEDataflowCommand runs.
const readmeDataflowMarker = "<!-- README test: the Dataflow command"

// readmeCommand returns the words of the command in the first fenced block
// after marker in the Markdown file, as sh would split them.
func readmeCommand(t *testing.T, file, marker string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s has no line %q", file, marker)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	block, _, closed := strings.Cut(rest, "\n```")
	if !ok || !closed {
		t.Fatalf("%s: no ```sh block after %q", file, marker)
	}
	words, err := shellWords(block)
	if err != nil {
		t.Fatalf("%s: the command after %q: %v", file, marker, err)
	}
	return words
}

// shellWords splits a one-command shell script into words as sh does for
// the subset a README command uses: backslash-newline continuations, single
// and double quotes, # comments; no variables or substitutions.
func shellWords(s string) ([]string, error) {
	s = strings.ReplaceAll(s, "\\\n", "")
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, errors.New("unterminated quote")
			}
			quoted := s[i+1 : i+1+j]
			if c == '"' && strings.ContainsAny(quoted, "$`\\") {
				return nil, errors.New("expansion in double quotes is not supported")
			}
			word.WriteString(quoted)
			inWord = true
			i += j + 1
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
		case c == ';' || c == '|' || c == '&':
			return nil, errors.New("more than one command")
		case c == '\n': // the end of the command: only comments may follow
			for _, l := range strings.Split(s[i+1:], "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					return nil, errors.New("more than one command")
				}
			}
			i = len(s)
		case c == '#' && !inWord:
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				i = len(s)
			} else {
				i += j - 1
			}
		case strings.IndexByte("$`\\*?", c) >= 0:
			return nil, errors.New("expansions and globs outside quotes are not supported")
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "go run ./cmd/x --a=1", want: []string{"go", "run", "./cmd/x", "--a=1"}},
		{in: "go run . \\\n  --input='gs://b/*.jsonl' \\\n  --x=\"a b\"", want: []string{"go", "run", ".", "--input=gs://b/*.jsonl", "--x=a b"}},
		{in: "cmd --a # a comment", want: []string{"cmd", "--a"}},
		{in: "cmd --a\n", want: []string{"cmd", "--a"}},
		{in: "cmd --a\ncmd --b", wantErr: true},
		{in: "cmd --a=$HOME", wantErr: true},
		{in: "cmd --a='x", wantErr: true},
		{in: "cmd --a=*.jsonl", wantErr: true},
		{in: "cmd --a; cmd --b", wantErr: true},
	}
	for _, tc := range tests {
		got, err := shellWords(tc.in)
		if tc.wantErr {
			if err == nil {
				t.Errorf("shellWords(%q) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestREADMEDataflowCommand runs the README's Dataflow command, read from
// README.md, with the Dataflow runner's --dry_run: the binary must accept
// every flag, pass its start-up checks (the --input glob is listed on a
// fake Cloud Storage holding one matching object) and have the runner
// translate the job, which needs --project, --region and --staging_location.
func TestREADMEDataflowCommand(t *testing.T) {
	words := readmeCommand(t, "../README.md", readmeDataflowMarker)
	const prefix = "go run ./cmd/beamthrottle"
	if len(words) < 4 || strings.Join(words[:3], " ") != prefix {
		t.Fatalf("README's Dataflow command is %q, want %q and flags", words, prefix)
	}
	args := words[3:]

	fake := newFakeGoogle(t)
	for _, a := range args {
		if glob, ok := strings.CutPrefix(a, "--input=gs://"); ok {
			fake.put(strings.ReplaceAll(glob, "*", "part-1"), []byte("{\"id\":1}\n"))
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(templateBinary(t), append(args, "--dry_run")...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + dir,
		"HOME=" + dir,
		"TMPDIR=" + dir,
		"CLOUDSDK_CONFIG=" + dir,
		"STORAGE_EMULATOR_HOST=" + fake.Listener.Addr().String(),
		"GCE_METADATA_HOST=" + fake.Listener.Addr().String(),
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	fake.checkUnexpected(t)
	if err != nil {
		t.Fatalf("README's Dataflow command with --dry_run: got %v, want exit 0; output (tail):\n%s", err, tail(out.String(), 20))
	}
	for _, want := range []string{"Dry-run: not submitting job", "JOB_TYPE_", "nothing was submitted"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; output (tail):\n%s", want, tail(out.String(), 20))
		}
	}
	if jobs := fake.submitted(); len(jobs) != 0 {
		t.Errorf("got %d jobs submitted, want none (dry run)", len(jobs))
	}
}
