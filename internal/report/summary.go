package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/beamthrottle/beamthrottle/pipeline"
)

// WriteSummary prints the summary of a run as a small table. want is the
// number of input elements when known (bounded input), else -1.
func WriteSummary(w io.Writer, s pipeline.Summary, want int64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, n int64) { fmt.Fprintf(tw, "%s\t%d\t\n", name, n) }
	row("success", s.Success)
	row("client_throttled", s.ClientThrottled)
	row("server_throttled", s.ServerThrottled)
	row("errors", s.Errors)
	if s.Dropped != 0 {
		row("dropped", s.Dropped)
	}
	if s.Parked != 0 || s.Reprocessed != 0 {
		row("parked", s.Parked)
	}
	fmt.Fprintf(tw, "%s\t%s\t\n", "", strings.Repeat("-", 8))
	row("total", s.Total())
	if s.Reprocessed != 0 {
		row("reprocessed (read)", s.Reprocessed)
	}
	if s.Reread != 0 {
		row("read again (own dead letters)", s.Reread)
	}
	if s.DeadLetterRejected != 0 {
		row("refused by Pub/Sub", s.DeadLetterRejected)
	}
	if s.Interrupted != 0 {
		row("not called (interrupted)", s.Interrupted)
	}
	if s.CacheHits != 0 {
		row("success from the cache", s.CacheHits)
	}
	tw.Flush()
	if want >= 0 {
		if s.Total() == want {
			fmt.Fprintf(w, "all %d input elements accounted for\n", want)
		} else {
			fmt.Fprintf(w, "MISMATCH: %d input elements, %d accounted for\n", want, s.Total())
		}
	}
}
