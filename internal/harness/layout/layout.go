// Package layout names the two kinds of package in this module, for its
// test, which holds the direction between them: product code never imports
// a harness, directly or through another package. Its tests also hold
// transforms/throttle apart from the clients of its quota's backends
// (Redis, Envoy's rate-limit service), which a program links only by
// importing a backend's package.
//
// The product is what a user builds on or runs: the public packages, their
// private helpers under internal/, and the Flex Template. The harnesses
// serve the commands that measure and demonstrate the product (the
// simulator, the benchmarks, the demo) and the tests; they import the
// product. The commands under cmd/ may import both: cmd/beamthrottle's
// --demo runs internal/harness/demo. docs/guide.md's layout tables list both kinds.
package layout

// product are the product's packages, as paths within the module; a path
// ending in "/..." stands for the package there and every one below it.
var product = []string{
	"clientcall",
	"transforms/...",
	"pipeline/...",
	"testserver",
	"internal/firing",
	"internal/permits",
	"internal/defaults",
	"internal/flaghelp",
	"internal/interrupt",
	"internal/prismsplit",
	"internal/pubsubconn",
	"internal/report",
	"internal/runners",
	"templates",
	"third_party", // its test only: third_party/beam is a module of its own
}

// harnesses are the packages used only by cmd/ tools and tests.
var harnesses = []string{
	"internal/harness/...", // simulators, benchmarks, the demo and the repository's own checks
	"internal/testenv/...", // services and emulators started for tests and harnesses
}
