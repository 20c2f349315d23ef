// Package livebench is the harness of cmd/livebench: it runs the throttle
// for real, the pipeline on Prism with the HTTP caller against the quota
// test server on loopback, in real time, for each scenario in the paced and
// SRE modes, measures each run from the server's own /stats (the priority
// runs: each element's wait, from a tap in front of the server), checks it
// against the pacing targets and writes the report (results.md) and the raw
// results (results.json).
package livebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Run runs the scenarios of set in its modes, prints the results to w and
// writes the report to set.Out.
func Run(ctx context.Context, set Settings, w io.Writer) error {
	only, modeList, outDir := set.Scenarios, set.Modes, set.Out
	var scs []scenario
	if only != "-" {
		var err error
		if scs, err = selected(only); err != nil {
			return err
		}
	}
	var ms []string
	for _, m := range strings.Split(modeList, ",") {
		ms = append(ms, strings.TrimSpace(m))
	}
	if set.Duration < 3*time.Second {
		return fmt.Errorf("-duration %v: want at least 3s", set.Duration)
	}
	if !(set.Competitor > 0) {
		return fmt.Errorf("-competitor %v: want a multiple > 0", set.Competitor)
	}
	var fresh []Result
	for _, sc := range scs {
		for _, mode := range ms {
			if !sc.runsIn(mode) {
				continue
			}
			r, err := runOne(ctx, sc, mode, set)
			if err != nil {
				return fmt.Errorf("%s/%s: %w", sc.name, mode, err)
			}
			fmt.Fprintln(w, summaryLine(sc, r))
			fresh = append(fresh, r)
		}
	}
	if outDir == "" {
		return nil
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	jsonPath := filepath.Join(outDir, "results.json")
	b, err := os.ReadFile(jsonPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	old, err := decodeResults(b)
	if err != nil {
		return err
	}
	all := merge(old, fresh)
	if err := os.WriteFile(jsonPath, encodeResults(all), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	writeReport(&md, set.Duration, all)
	return os.WriteFile(filepath.Join(outDir, "results.md"), []byte(md.String()), 0o644)
}
