package throttle

import (
	"context"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestAdvertisedQuota: against a fixed window of 20 requests every 10 s
// that advertises what remains of it on every answer (the IETF draft's
// headers, the reset in whole seconds), the default paced mode spreads each
// window's quota over it rather than finding it by refusals: 40 elements,
// twice a window, all succeed with at most two refusals, one per reset the
// run crosses (the pacer's view of what remains is an answer old; a
// machine slowed by load can let one request reach a window used up). The
// same run without the headers was refused 17 times.
func TestAdvertisedQuota(t *testing.T) {
	const n = 40
	for _, tc := range []struct {
		name       string
		advertise  testserver.Advertise
		maxRefused int64
	}{
		{"advertised", testserver.AdvertiseIETF, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := testserver.NewServer(testserver.Config{Quota: 20, Period: 10 * time.Second, Mode: testserver.FixedWindow,
				Advertise: tc.advertise})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, s := beam.NewPipelineWithRoot()
			out := Adaptive(s, generate(s, n), &clientcall.HTTP{URL: srv.Endpoint()}, WithGroups(2))
			passert.Count(s, out.Success, "success", n)
			runPipeline(t, p, false) // real time: the server counts its window on the wall clock
			st := srv.Handler.Stats()
			t.Logf("server accepted %d, refused %d", st.Accepted, st.Rejected)
			if st.Rejected > tc.maxRefused {
				t.Errorf("server refused %d, want at most %d (accepted %d)", st.Rejected, tc.maxRefused, st.Accepted)
			}
		})
	}
}

// TestAdvertisedLimits: what a caller reports reaches the pacer in the
// order reported: a limit on requests counts one for each request, a limit
// on tokens what the caller said the request took, and -1 (not known)
// when it did not say, kept so that the limits keep their places.
func TestAdvertisedLimits(t *testing.T) {
	reset := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name     string
		reported []clientcall.Advertised
		want     []float64 // Used of each limit, in order
	}{
		{"nothing", nil, nil},
		{"requests", []clientcall.Advertised{{Unit: "requests", Limit: 500, Remaining: 499, Reset: reset}}, []float64{1}},
		{"requests and tokens", []clientcall.Advertised{
			{Unit: "tokens", Limit: 8000, Remaining: 7000, Reset: reset, Used: 23},
			{Unit: "requests", Limit: 500, Remaining: 499, Reset: reset, Used: 7},
		}, []float64{23, 1}},
		{"tokens not said", []clientcall.Advertised{
			{Unit: "tokens", Limit: 8000, Remaining: 7000, Reset: reset},
			{Unit: "requests", Limit: 500, Remaining: 499, Reset: reset},
		}, []float64{-1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a advertised
			clientcall.ReportAdvertised(a.context(context.Background()), tc.reported)
			got := a.quota()
			if len(got) != len(tc.want) {
				t.Fatalf("%d limits, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, q := range got {
				r := tc.reported[i]
				if q.Used != tc.want[i] || q.Limit != r.Limit || q.Remaining != r.Remaining || !q.Reset.Equal(r.Reset) {
					t.Errorf("limit %d: %+v, want Used %v and the reported %+v", i, q, tc.want[i], r)
				}
			}
		})
	}
}
