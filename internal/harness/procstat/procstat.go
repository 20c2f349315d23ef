// Package procstat reads figures about processes that the Go runtime does
// not report, for benchmarks, load reports and tests: peak memory, and the
// addresses a process listens on.
package procstat

import (
	"os"
	"strconv"
	"strings"
)

// PeakRSSMB returns the process's peak resident set size in MiB (Linux
// VmHWM from /proc/self/status), or 0 where that is unavailable.
func PeakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return parseHWM(string(data))
}

// parseHWM returns the VmHWM line of a /proc/<pid>/status text in MiB, 0
// if it has none.
func parseHWM(status string) float64 {
	for line := range strings.SplitSeq(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
