package clientcall_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

func TestEcho(t *testing.T) {
	var c clientcall.Caller[[]byte, []byte] = clientcall.Echo{}
	got, err := c.Call(t.Context(), []byte("hi"))
	if err != nil || string(got) != "hi" {
		t.Errorf("Call = %q, %v; want \"hi\", nil", got, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Call(ctx, []byte("hi")); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with canceled context = %v, want context.Canceled", err)
	}
}

func BenchmarkEcho(b *testing.B) {
	c := clientcall.Echo{}
	req := []byte("payload")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTP measures one call over a reused loopback connection.
func BenchmarkHTTP(b *testing.B) {
	srv := newCountingServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	h := &clientcall.HTTP{URL: srv.URL}
	ctx := context.Background()
	if err := h.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	defer h.Teardown(ctx)
	req := make([]byte, 256)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Call(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(srv.conns.Load()), "conns")
}
