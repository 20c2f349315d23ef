package testserver_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// chromiumPath returns the Chromium binary to test the page with: $CHROMIUM
// if set, else the first of chromium, chromium-browser, google-chrome on
// $PATH. It fails the test if there is none: make test installs Chromium
// (scripts/install-test-deps), and a test of the page that did not run must
// not pass.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium not found, so the chart page cannot be tested in a browser; " +
		"make test installs it (scripts/install-test-deps), or install it with `sudo apt-get install chromium` " +
		"(Debian/Ubuntu) or set CHROMIUM to its path")
	return ""
}

// dumpDOM loads url in headless Chromium, lets the page run for 5 seconds
// of virtual time (Chromium fast-forwards timers; it waits for fetches)
// and returns the serialised DOM.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	bin := chromiumPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=5000", "--dump-dom", url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second // helper processes may hold the pipes open
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s --dump-dom %s: %v\nstderr:\n%s", bin, url, err, stderr.String())
	}
	if stdout.Len() == 0 {
		t.Fatalf("%s --dump-dom %s: empty output\nstderr:\n%s", bin, url, stderr.String())
	}
	return stdout.String()
}

// drawn is what the page recorded on <body> after drawing, and whether the
// chart holds a canvas.
type drawn struct {
	ready                                             string
	points, accepted, rejected, clientThrottled, errs int
	marks                                             int
	canvases                                          int
	pollError                                         string
}

// parseDrawn reads the page's markers from a dumped DOM.
func parseDrawn(t *testing.T, dom string) drawn {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatalf("parsing the dumped DOM: %v", err)
	}
	var d drawn
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "body":
			for _, a := range n.Attr {
				num := func() int {
					v, err := strconv.Atoi(a.Val)
					if err != nil {
						t.Errorf("<body %s=%q>: not an integer", a.Key, a.Val)
					}
					return v
				}
				switch a.Key {
				case "data-ready":
					d.ready = a.Val
				case "data-points":
					d.points = num()
				case "data-accepted":
					d.accepted = num()
				case "data-rejected":
					d.rejected = num()
				case "data-client-throttled":
					d.clientThrottled = num()
				case "data-errors":
					d.errs = num()
				case "data-marks":
					d.marks = num()
				case "data-error":
					d.pollError = a.Val
				}
			}
		case "canvas":
			if inUPlot(n) {
				d.canvases++
			}
		}
	}
	return d
}

// inUPlot reports whether n is inside uPlot's root element.
func inUPlot(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		for _, a := range p.Attr {
			if a.Key == "class" && strings.Contains(" "+a.Val+" ", " uplot ") {
				return true
			}
		}
	}
	return false
}

// post sends a POST to url, failing the test unless it is answered want.
func post(t *testing.T, url string, want int) {
	t.Helper()
	res, err := http.Post(url, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != want {
		t.Fatalf("POST %s: got %d, want %d", url, res.StatusCode, want)
	}
}

// The fake clock stands still, so every count falls in one second, which
// is far before the browser's clock: the chart ends at that second.
func TestPageChartsStatsInChromium(t *testing.T) {
	chromiumPath(t) // skip before starting anything
	clock := newFakeClock()
	s := newServer(t, testserver.Config{Quota: 3, Period: time.Minute, Now: clock.Now})
	for range 3 {
		post(t, s.Endpoint(), http.StatusOK)
	}
	for range 2 {
		post(t, s.Endpoint(), http.StatusTooManyRequests)
	}
	post(t, s.URL+"/report?client_throttled=4", http.StatusOK)
	post(t, s.URL+"/mark?label=run+1", http.StatusOK)

	for _, tc := range []struct {
		path       string
		wantPoints int
	}{
		{"/", 300},
		{"/?window=60&every=0.5", 60},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got := parseDrawn(t, dumpDOM(t, s.URL+tc.path))
			want := drawn{
				ready:  "true",
				points: tc.wantPoints, accepted: 3, rejected: 2, clientThrottled: 4, errs: 0, marks: 1,
				canvases: 1,
			}
			if got != want {
				t.Errorf("chart after loading %s: got %+v, want %+v", tc.path, got, want)
			}
		})
	}
}

// The page keeps polling /stats and redraws: counts added after its first
// poll show on the chart.
func TestPageUpdatesLiveInChromium(t *testing.T) {
	chromiumPath(t)
	clock := newFakeClock()
	h := newHandler(t, testserver.Config{Now: clock.Now})
	var polls atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stats" && polls.Add(1) == 2 {
			h.ReportClientThrottled(5) // after the first poll, before the second
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	for range 2 {
		post(t, s.URL+"/api", http.StatusOK)
	}

	got := parseDrawn(t, dumpDOM(t, s.URL+"/"))
	want := drawn{ready: "true", points: 300, accepted: 2, clientThrottled: 5, canvases: 1}
	if got != want {
		t.Errorf("chart after 5s of polling: got %+v, want %+v", got, want)
	}
	if got := polls.Load(); got < 2 {
		t.Errorf("GET /stats requests: got %d, want at least 2", got)
	}
}
