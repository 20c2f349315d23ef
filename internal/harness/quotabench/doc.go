// Package quotabench is the harness of `make quotabench` (cmd/quotabench),
// the proof of the shared quota: several pipeline processes
// (cmd/beamthrottle, each an OS process on its own Prism) share one quota
// kept in Redis or in Envoy's rate-limit service, against the quota test
// server whose capacity equals that quota; beside them, the adaptive
// throttle alone; then an uncontrolled competitor; then the quota's service
// killed, restarted and slowed down. The strict scenarios (Scenario.Strict)
// put the processes against a strict limiter instead, a GCRA with no
// burst, with a batch job's elements all at once, and time how close to
// the quota's pace they finish (Result.TimeRatio). The priority scenarios
// (Scenario.Priority) measure priority shares across processes: against
// the same strict limiter, a process whose elements are all high priority
// and one whose elements are all low share a Redis quota of slots, each
// offering the whole quota from a Pub/Sub subscription the harness
// publishes to (tierSource), with and without --quota_high_share, and the
// quota server counts what each had accepted of its demand
// (Result.Tiers). The window scenarios (Scenario.Window) put eight
// processes against a fixed window that advertises what is left of it;
// the crossed ones (Scenario.Crossed) cross that window with seconds of
// latency and with a bare window, each run bounded by a deadline that
// fails its row (Scenario.Deadline).
//
// Everything is measured from the quota server's own per-client counts
// (testserver.ClientHeader) and from each process's summary and output
// files: waste, utilisation of the capacity left, and conservation. Run
// builds the binary, starts the services (internal/testenv/services) and runs the
// scenarios; WriteReport and WritePlot make docs/quota. Its numbers depend
// on the machine, so it is a benchmark, not a test: the unit tests cover
// the pure parts (metrics, parsing, report) only.
package quotabench
