package competitor_test

import (
	"context"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/harness/competitor"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestRun: the server counts the competitor's requests under its name, all
// accepted by an unlimited server, and Run returns once they are answered.
func TestRun(t *testing.T) {
	srv, err := testserver.NewServer(testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		competitor.Run(ctx, srv.Endpoint(), "rival", 100)
	}()
	for deadline := time.Now().Add(30 * time.Second); srv.Handler.Stats().Clients["rival"].Accepted < 5; {
		if time.Now().After(deadline) {
			t.Fatal("the server saw fewer than 5 competitor requests in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if c := srv.Handler.Stats().Clients["rival"]; c.Rejected != 0 || c.Errors != 0 {
		t.Errorf("server counted %+v for the competitor, want only accepted requests", c)
	}
}
