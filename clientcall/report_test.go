package clientcall_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestHTTPReportsAdvertised: the HTTP caller reports the quota the server
// advertises on every answer, the refusal included, to the context's sink;
// without a sink it reports nothing and calls as before.
func TestHTTPReportsAdvertised(t *testing.T) {
	srv, _ := newQuotaServer(t, testserver.Config{Mode: testserver.FixedWindow, Quota: 3, Period: time.Minute,
		Advertise: testserver.AdvertiseIETF})
	h := newHTTP(t, &clientcall.HTTP{URL: srv.Endpoint()})
	var got []int64 // Remaining, answer by answer
	ctx := clientcall.WithAdvertised(t.Context(), func(as []clientcall.Advertised) {
		for _, a := range as {
			if a.Limit != 3 || a.Window != time.Minute {
				t.Errorf("advertised %+v, want a limit of 3 a minute", a)
			}
			got = append(got, a.Remaining)
		}
	})
	for range 4 {
		_, _ = h.Call(ctx, []byte("x"))
	}
	if _, err := h.Call(t.Context(), []byte("no sink")); err == nil {
		t.Error("the call without a sink: got nil error, want the 429")
	}
	if want := []int64{2, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("remaining reported: got %v, want %v", got, want)
	}
}

// TestReportAdvertised: a custom caller reports with ReportAdvertised; with
// no sink, or nothing to report, nothing happens.
func TestReportAdvertised(t *testing.T) {
	calls := 0
	ctx := clientcall.WithAdvertised(context.Background(), func([]clientcall.Advertised) { calls++ })
	clientcall.ReportAdvertised(ctx, []clientcall.Advertised{{Unit: "tokens", Limit: 100, Remaining: 40}})
	clientcall.ReportAdvertised(ctx, nil)
	clientcall.ReportAdvertised(context.Background(), []clientcall.Advertised{{Limit: 1}})
	if calls != 1 {
		t.Errorf("sink called %d times, want 1", calls)
	}
}
