package main

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/beamthrottle/beamthrottle/internal/flaghelp"
	"github.com/beamthrottle/beamthrottle/internal/runners"
	"github.com/beamthrottle/beamthrottle/pipeline"
)

// helpOutput returns the binary's --help as main sets it up: Beam's flags
// (those of flag.CommandLine but the test binary's own) and the binary's.
func helpOutput(t *testing.T) (out string, fs *flag.FlagSet) {
	t.Helper()
	fs = flag.NewFlagSet("/some/build/cache/path/exe/beamthrottle", flag.ContinueOnError)
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
	defineFlags(fs)
	var b bytes.Buffer
	fs.SetOutput(&b)
	if err := fs.Parse([]string{"--help"}); err != flag.ErrHelp {
		t.Fatalf("--help: got %v, want flag.ErrHelp", err)
	}
	return b.String(), fs
}

var (
	titleRE    = regexp.MustCompile(`^(\S.*):$`) // after an empty line
	flagLineRE = regexp.MustCompile(`^  --(\S+)`)
)

// TestUsage checks the layout of --help: a header with no path and two
// examples, the binary's flags in groups (source, caller, throttle, outputs,
// Pub/Sub, reprocessing, demo), each once, then Beam's, with --runner
// listing the runners.
func TestUsage(t *testing.T) {
	out, fs := helpOutput(t)
	lines := strings.Split(out, "\n")

	// The header: up to the first group.
	var header []string
	for i, l := range lines {
		if m := titleRE.FindStringSubmatch(l); m != nil && i > 0 && lines[i-1] == "" && m[1] != "Examples" {
			break
		}
		header = append(header, l)
	}
	h := strings.Join(header, "\n")
	if !strings.HasPrefix(h, "beamthrottle ") {
		t.Errorf("header starts %q, want it to start with the program name beamthrottle", header[0])
	}
	if !strings.Contains(h, "\nUsage: beamthrottle [flags]\n") {
		t.Errorf("header lacks the line %q:\n%s", "Usage: beamthrottle [flags]", h)
	}
	for _, path := range []string{fs.Name(), os.Args[0], "go-build", "/exe/"} {
		if strings.Contains(out, path) {
			t.Errorf("--help shows the path %q, want the fixed name beamthrottle", path)
		}
	}
	if n := strings.Count(h, "\n  beamthrottle --"); n < 2 {
		t.Errorf("header has %d example command lines, want at least 2:\n%s", n, h)
	}

	// Sections in order, and where each flag is.
	wantTitles := []string{"Source", "Caller", "Throttle", "Response cache", "Shared quota", "Outputs", "Pub/Sub", "Reprocessing", "Demo",
		beamTitle, beamOtherTitle}
	var titles []string
	where := map[string][]int{} // flag → indexes of the sections listing it
	for i, l := range lines[len(header):] {
		if m := titleRE.FindStringSubmatch(l); m != nil && lines[len(header)+i-1] == "" {
			titles = append(titles, m[1])
			continue
		}
		if m := flagLineRE.FindStringSubmatch(l); m != nil {
			where[m[1]] = append(where[m[1]], len(titles)-1)
		}
	}
	if len(titles) != len(wantTitles) {
		t.Fatalf("got sections %q, want %q", titles, wantTitles)
	}
	for i, want := range wantTitles {
		if !strings.HasPrefix(titles[i], want) {
			t.Errorf("section %d is %q, want %q", i, titles[i], want)
		}
	}
	firstBeam := len(wantTitles) - 2

	own := flag.NewFlagSet("own", flag.ContinueOnError)
	defineFlags(own)
	own.VisitAll(func(f *flag.Flag) {
		switch s := where[f.Name]; {
		case len(s) != 1:
			t.Errorf("--%s is listed %d times, want once", f.Name, len(s))
		case s[0] >= firstBeam:
			t.Errorf("--%s is listed under %q, want one of beamthrottle's groups", f.Name, titles[s[0]])
		}
	})
	fs.VisitAll(func(f *flag.Flag) {
		if own.Lookup(f.Name) != nil {
			return
		}
		switch s := where[f.Name]; {
		case len(s) != 1:
			t.Errorf("Beam's --%s is listed %d times, want once", f.Name, len(s))
		case s[0] < firstBeam:
			t.Errorf("Beam's --%s is listed under %q, want it after beamthrottle's flags", f.Name, titles[s[0]])
		}
	})

	// --runner's description lists every runner.
	_, runner, _ := strings.Cut(out, "\n  --runner string\n")
	runner, _, _ = strings.Cut(runner, "\n  --")
	for _, r := range runners.List() {
		if !strings.Contains(runner, "\n        "+r.Name) {
			t.Errorf("--runner's description does not list %s:\n%s", r.Name, runner)
		}
	}
}

// TestPipelineGroups: every flag pipeline.RegisterFlags defines is in
// exactly one group of flaghelp.Pipeline, and every grouped name is such a
// flag.
func TestPipelineGroups(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	pipeline.RegisterFlags(fs)
	seen := map[string]string{}
	for _, g := range flaghelp.Pipeline {
		if g.Title == "" || len(g.Flags) == 0 {
			t.Errorf("group %q with flags %q: want a title and flags", g.Title, g.Flags)
		}
		for _, name := range g.Flags {
			if fs.Lookup(name) == nil {
				t.Errorf("group %q lists --%s, which pipeline.RegisterFlags does not define", g.Title, name)
			}
			if other, ok := seen[name]; ok {
				t.Errorf("--%s is in groups %q and %q, want one", name, other, g.Title)
			}
			seen[name] = g.Title
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := seen[f.Name]; !ok {
			t.Errorf("--%s is in no group of flaghelp.Pipeline", f.Name)
		}
	})
}

func TestWrap(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"a b c", 10, []string{"a b c"}},
		{"aaaa bbbb cccc", 9, []string{"aaaa bbbb", "cccc"}},
		{"  item one two", 10, []string{"  item one", "two"}},
		{"averyveryverylongword x", 5, []string{"averyveryverylongword", "x"}},
	}
	for _, tc := range tests {
		got := wrap(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
