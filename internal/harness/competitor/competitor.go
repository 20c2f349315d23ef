// Package competitor is an uncontrolled client of the quota test server, for
// the real-time harnesses (internal/harness/livebench, internal/harness/quotabench): it
// takes part of the server's capacity whatever the answers, as another job
// or service sharing an API quota would.
package competitor

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// Run posts to url at rate per second, evenly spaced, each request naming
// the client name with testserver.ClientHeader, until ctx is done. It never
// slows down and never retries; ticks a busy machine dropped are caught up.
// It returns when every request sent has been answered.
func Run(ctx context.Context, url, name string, rate float64) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()

	var wg sync.WaitGroup
	defer wg.Wait()
	begin := time.Now()
	var sent int64
	t := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for due := int64(now.Sub(begin).Seconds() * rate); sent < due; sent++ {
				wg.Go(func() { send(client, url, name) })
			}
		}
	}
}

// send posts one request and drains the answer.
func send(client *http.Client, url, name string) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"from":"competitor"}`))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(testserver.ClientHeader, name)
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
