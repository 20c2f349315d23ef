package livebench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// compete is an uncontrolled client sharing the quota: it sends POST
// requests to url at rate per second, evenly spaced, each naming it with
// testserver.ClientHeader, until ctx is done. It never slows down and never
// retries, whatever the answers. It returns when every request sent has
// been answered.
func compete(ctx context.Context, url string, rate float64) {
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
			// Catch up on ticks a busy machine dropped.
			for due := int64(now.Sub(begin).Seconds() * rate); sent < due; sent++ {
				wg.Go(func() { send(client, url) })
			}
		}
	}
}

// send posts one competitor request and drains the answer.
func send(client *http.Client, url string) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{"from":"competitor"}`)))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(testserver.ClientHeader, competitorName)
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
