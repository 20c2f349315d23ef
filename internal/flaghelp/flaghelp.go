// Package flaghelp carries the --help groups of package pipeline's flags to
// cmd/beamthrottle, which shows them. The groups are part of pipeline's
// table of flags, where each flag is said once, but only the command shows
// them, so they are not part of pipeline's API: pipeline sets Pipeline when
// it is initialised.
package flaghelp

// A Group is a titled group of flags, for --help.
type Group struct {
	Title string
	Flags []string // flag names, without dashes, in the order to show them
}

// Pipeline holds the groups of the flags pipeline.RegisterFlags defines,
// each flag in one group, in the order --help shows them. Package pipeline
// sets it when it is initialised; it is nil in a program that does not
// import pipeline.
var Pipeline []Group
