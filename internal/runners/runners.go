// Package runners lists the Beam runners this module's binaries can run
// the pipeline on, as Beam's --runner flag names them, with where each runs
// the pipeline's DoFns, and reads from Beam's flags whether the chosen
// runner waits for the job to end. Package pipeline checks and runs with
// it; cmd/beamthrottle's --help lists it.
package runners

import (
	"flag"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
)

// Runner is a Beam runner a binary that runs the pipeline (through beamx)
// can use, as Beam's --runner flag names it.
type Runner struct {
	Name    string   // the usual name
	Aliases []string // other names Beam registers for it
	Doc     string   // one line for --help
	// Workers says where the pipeline's DoFns (the caller, its --header_env
	// variables, the file reads) run: here, elsewhere, or nowhere.
	Workers Workers
}

// Workers says where a runner executes the pipeline's DoFns.
type Workers int

const (
	// WorkersHere: in this process (Prism embedded, direct, or a job server
	// with --environment_type=LOOPBACK).
	WorkersHere Workers = iota
	// WorkersRemote: on other machines (Dataflow; a job server with docker
	// or process workers), with their own environment and filesystem.
	WorkersRemote
	// WorkersNone: the runner executes nothing (dot draws the graph, vet
	// checks it).
	WorkersNone
)

// list is every runner Beam registers in a binary that imports beamx (as
// package pipeline does), and vet, imported by universal.
// TestRegistered checks it against Beam's registry, which Beam does not
// let a program list.
var list = []Runner{
	{"prism", []string{"PrismRunner"}, "embedded in this process, the default", WorkersHere},
	{"dataflow", []string{"DataflowRunner"}, "Google Cloud Dataflow: --project, --region, --staging_location", WorkersRemote},
	{"universal", []string{"portable", "PortableRunner"}, "a job server at --endpoint (Flink, Spark, Prism)", WorkersRemote},
	{"flink", []string{"FlinkRunner"}, "a Flink job server at --endpoint", WorkersRemote},
	{"spark", []string{"SparkRunner"}, "a Spark job server at --endpoint", WorkersRemote},
	{"direct", []string{"DirectRunner"}, "Beam's deprecated in-process runner (use prism)", WorkersHere},
	{"dot", nil, "writes the pipeline graph to --dot_file, runs nothing", WorkersNone},
	{"vet", nil, "checks the pipeline's use of reflection, runs nothing", WorkersNone},
}

// List returns the runners, the default first.
func List() []Runner {
	out := slices.Clone(list)
	for i := range out {
		out[i].Aliases = slices.Clone(out[i].Aliases)
	}
	return out
}

// Lookup finds the runner Beam runs for name ("" is beamx's default,
// prism). Names are case-sensitive, as Beam's are.
func Lookup(name string) (Runner, bool) {
	if name == "" {
		name = "prism"
	}
	for _, r := range list {
		if r.Name == name || slices.Contains(r.Aliases, name) {
			return r, true
		}
	}
	return Runner{}, false
}

// Names lists every name of every runner, for error messages.
func Names() string {
	var names []string
	for _, r := range list {
		names = append(names, r.Name)
		names = append(names, r.Aliases...)
	}
	return strings.Join(names, ", ")
}

// Waits reports whether the runner Beam's flags select waits for the job
// to end, so that its result holds the job's metrics. The Dataflow runner
// returns once the job is submitted (--async) or written as a template
// (--template_location, which the Flex Template launcher passes), with a
// result that has no metrics: its Metrics method dereferences a nil
// pointer.
func Waits() bool {
	if *jobopts.Async {
		return false
	}
	if f := flag.Lookup("template_location"); f != nil && f.Value.String() != "" {
		return false
	}
	return true
}
