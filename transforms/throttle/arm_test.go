package throttle

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

// TestIdleGroupFirstFiring: when an element arrives at an idle group, a
// paced group whose calls take one element fires at once; a group that
// packs calls, chooses among priorities or runs the SRE rule fires a batch
// interval later, so that a batch gathers. On Prism's synthetic clock,
// with a batch interval of an hour and a max wait of half that, the counts
// tell the two apart: a group that fires at once sends every element, one
// that waits finds them all past their max wait and routes them
// client-throttled.
func TestIdleGroupFirstFiring(t *testing.T) {
	const n = 5
	for _, c := range []struct {
		name   string
		caller any
		opts   []Option
		prompt bool
	}{
		{"paced, one element per call", clientcall.Echo{}, nil, true},
		{"paced, calls of several elements", clientcall.Echo{}, []Option{WithItemsPerCall(n)}, false},
		{"paced, priorities", clientcall.Echo{}, []Option{WithPriority(prefixPriority{})}, false},
		{"SRE", clientcall.Echo{}, []Option{WithMode(ModeSRE)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			opts := append([]Option{WithGroups(1), WithBatchInterval(time.Hour), WithMaxWait(30 * time.Minute)}, c.opts...)
			out := Adaptive(s, generate(s, n), c.caller, opts...)
			sent, late := n, 0
			if !c.prompt {
				sent, late = 0, n
			}
			passert.Count(s, out.Success, "success", sent)
			passert.Count(s, out.ClientThrottled, "client-throttled", late)
			passert.Empty(s, out.Errors)
			passert.Empty(s, out.ServerThrottled)
			runPipeline(t, p, true)
		})
	}
}
