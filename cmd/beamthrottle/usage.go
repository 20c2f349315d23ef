package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/beamthrottle/beamthrottle/internal/flaghelp"
	"github.com/beamthrottle/beamthrottle/internal/runners"
)

// usageHeader opens --help. The program name is fixed: under `go run`
// os.Args[0] is a path in the build cache.
const usageHeader = `beamthrottle sends each input element (a line of a file, a Pub/Sub message) to a quota-limited
API through an adaptive client-side throttle, and writes every element to exactly one output:
success, client_throttled, server_throttled or errors (JSONL files; Pub/Sub topics for dead
letters). It is an Apache Beam pipeline: Prism in this process by default, Dataflow, or a
Flink/Spark job server.

Usage: beamthrottle [flags]

Examples:
  # files through the HTTP caller, on Prism in this process; outputs under out/
  beamthrottle --input='data/*.jsonl' --url=https://api.example.com/v1/x --output_prefix=out/

  # a Pub/Sub subscription on Dataflow; throttled payloads to a dead-letter topic
  beamthrottle --runner=dataflow --project=my-project --region=us-central1 \
    --staging_location=gs://my-bucket/staging \
    --subscription=requests-sub --url=https://api.example.com/v1/x \
    --dead_letter_topic=requests-dlq --output_prefix=gs://my-bucket/out/

  beamthrottle --demo    # the local demo (make run)
`

// demoGroup holds the flags cmd/beamthrottle defines itself.
var demoGroup = flaghelp.Group{Title: "Demo", Flags: []string{"demo"}}

// beamTitle and beamOtherTitle head Beam's flags: the common ones first, in
// beamCommon's order, then the others in name order.
const (
	beamTitle      = "Runner and job (Beam's flags)"
	beamOtherTitle = "Other Beam flags"
)

var beamCommon = []string{
	"runner", "endpoint", "environment_type", "project", "region", "staging_location", "temp_location",
	"job_name", "async", "dry_run", "experiments", "worker_binary",
}

// usageText overrides the description of a Beam flag where Beam's says
// "required" of a flag only one runner needs.
var usageText = map[string]string{
	"runner":           runnerUsage(),
	"endpoint":         "Job server host:port, for --runner=universal, flink or spark (or a standalone Prism).",
	"region":           "Dataflow: the region to run the job in (required with --runner=dataflow).",
	"staging_location": "Dataflow: where the job's files are staged, gs://BUCKET/PATH (required with --runner=dataflow).",
	"temp_location":    "Dataflow: temporary files, gs://BUCKET/PATH (default: <staging_location>/tmp).",
}

// runnerUsage is the description of Beam's --runner flag: the runners of
// this binary with what each is for.
func runnerUsage() string {
	var b strings.Builder
	b.WriteString("Pipeline runner (Beam's flag). Empty means prism. One of:")
	for _, r := range runners.List() {
		fmt.Fprintf(&b, "\n  %s", r.Name)
		if len(r.Aliases) > 0 {
			fmt.Fprintf(&b, " (or %s)", strings.Join(r.Aliases, ", "))
		}
		fmt.Fprintf(&b, ": %s", r.Doc)
	}
	return b.String()
}

// usageWidth is where descriptions wrap.
const usageWidth = 100

// usage writes --help to w: the header, the flags of groups in their order
// and then every other flag of fs (Beam's), the common ones first.
func usage(w io.Writer, fs *flag.FlagSet, groups []flaghelp.Group) {
	io.WriteString(w, usageHeader)
	shown := map[string]bool{}
	section := func(title string, names []string) {
		var flags []*flag.Flag
		for _, name := range names {
			if f := fs.Lookup(name); f != nil && !shown[name] {
				flags = append(flags, f)
				shown[name] = true
			}
		}
		if len(flags) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, f := range flags {
			writeFlag(w, f)
		}
	}
	for _, g := range groups {
		section(g.Title, g.Flags)
	}
	section(beamTitle, beamCommon)
	var other []string
	fs.VisitAll(func(f *flag.Flag) { // in name order
		if !shown[f.Name] {
			other = append(other, f.Name)
		}
	})
	section(beamOtherTitle, other)
}

// writeFlag writes one flag as flag.PrintDefaults does, with two dashes
// and its description wrapped.
func writeFlag(w io.Writer, f *flag.Flag) {
	typ, text := flag.UnquoteUsage(f)
	if t, ok := usageText[f.Name]; ok {
		text = t
	}
	line := "  --" + f.Name
	if typ != "" {
		line += " " + typ
	}
	fmt.Fprintln(w, line)
	if !isZeroValue(f) {
		if typ == "string" {
			text += fmt.Sprintf(" (default %q)", f.DefValue)
		} else {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
	}
	const indent = "      "
	for _, para := range strings.Split(text, "\n") {
		extra := ""
		if strings.HasPrefix(para, "  ") { // a list item: continue under its text
			extra = "    "
		}
		for i, l := range wrap(para, usageWidth-len(indent)-len(extra)) {
			if i > 0 {
				l = extra + l
			}
			fmt.Fprintln(w, indent+l)
		}
	}
}

// wrap splits s into lines of at most width bytes at spaces (a longer word
// gets a line of its own), keeping s's leading spaces on the first line.
func wrap(s string, width int) []string {
	lead := s[:len(s)-len(strings.TrimLeft(s, " "))]
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{""}
	}
	var lines []string
	line := lead + words[0]
	for _, word := range words[1:] {
		if len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		line += " " + word
	}
	return append(lines, line)
}

// isZeroValue reports whether the flag's default is its type's zero value,
// which flag.PrintDefaults leaves out, as it does.
func isZeroValue(f *flag.Flag) (zero bool) {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	defer func() {
		if recover() != nil { // a Value whose String fails on its zero value
			zero = slices.Contains([]string{"", "0", "false", "[]"}, f.DefValue)
		}
	}()
	return f.DefValue == z.Interface().(flag.Value).String()
}
