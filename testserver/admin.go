package testserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const indexPage = `beamthrottle quota test server

/api, /api/...        any method: the quota'd API (200 echoes the body, or answers a JSON-array
                      batch item by item; 429, 413, 400 bad cost, 500, outage status)
GET  /stats           stats as JSON
GET  /metrics         Prometheus metrics
POST /admin/quota     ?quota=N&period=1s
POST /admin/outage    ?status=503|429|0
POST /admin/faults    ?latency=50ms&jitter=10ms&error_rate=0.3&item_error_rate=0.1
POST /admin/reset     zero the stats
POST /report          ?client_throttled=N
POST /mark            ?label=TEXT (a vertical line on the chart at this second)
GET  /healthz         health check
GET  /                live chart of /stats (HTML page)
GET  /help            this list
`

func (h *Handler) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("/api", h.serveAPI)
	mux.HandleFunc("/api/", h.serveAPI)
	mux.HandleFunc("GET /stats", h.serveStats)
	mux.Handle("GET /metrics", promhttp.HandlerFor(h.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("POST /admin/quota", h.serveQuota)
	mux.HandleFunc("POST /admin/outage", h.serveOutage)
	mux.HandleFunc("POST /admin/faults", h.serveFaults)
	mux.HandleFunc("POST /admin/reset", h.serveReset)
	mux.HandleFunc("POST /report", h.serveReport)
	mux.HandleFunc("POST /mark", h.serveMark)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	h.pageRoutes(mux) // GET /: live chart page; GET /web/...; GET /help: this index
	h.mux = mux
}

func (h *Handler) serveStats(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(h.Stats())
}

// params reads the query of r, answering 400 and returning false if it has
// a parameter not in allowed, a repeated one, or none of them.
func params(w http.ResponseWriter, r *http.Request, allowed ...string) (url.Values, bool) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		badRequest(w, "bad query: %v", err)
		return nil, false
	}
	for k, v := range q {
		if !slices.Contains(allowed, k) {
			badRequest(w, "unknown parameter %q; want %s", k, strings.Join(allowed, ", "))
			return nil, false
		}
		if len(v) > 1 {
			badRequest(w, "parameter %q given %d times", k, len(v))
			return nil, false
		}
	}
	if len(q) == 0 {
		badRequest(w, "no parameters; want %s", strings.Join(allowed, ", "))
		return nil, false
	}
	return q, true
}

func badRequest(w http.ResponseWriter, format string, args ...any) {
	http.Error(w, "testserver: "+fmt.Sprintf(format, args...), http.StatusBadRequest)
}

// duration parses the non-negative duration parameter name of q, or returns
// def if it is absent.
func duration(q url.Values, name string, def time.Duration) (time.Duration, error) {
	if !q.Has(name) {
		return def, nil
	}
	d, err := time.ParseDuration(q.Get(name))
	if err != nil {
		return 0, fmt.Errorf("parameter %s: %v", name, err)
	}
	if d < 0 {
		return 0, fmt.Errorf("parameter %s: %v is negative", name, d)
	}
	return d, nil
}

// fraction parses the parameter name of q, a number in [0, 1], or returns
// def if it is absent.
func fraction(q url.Values, name string, def float64) (float64, error) {
	if !q.Has(name) {
		return def, nil
	}
	f, err := strconv.ParseFloat(q.Get(name), 64)
	if err != nil || !(f >= 0 && f <= 1) {
		return 0, fmt.Errorf("parameter %s: %q: want a number in [0, 1]", name, q.Get(name))
	}
	return f, nil
}

func (h *Handler) serveQuota(w http.ResponseWriter, r *http.Request) {
	q, ok := params(w, r, "quota", "period")
	if !ok {
		return
	}
	h.mu.Lock()
	quota, period := h.lim.quota, h.lim.period
	h.mu.Unlock()
	if q.Has("quota") {
		n, err := strconv.Atoi(q.Get("quota"))
		if err != nil {
			badRequest(w, "parameter quota: %q is not an integer", q.Get("quota"))
			return
		}
		quota = n
	}
	if q.Has("period") {
		d, err := time.ParseDuration(q.Get("period"))
		if err != nil {
			badRequest(w, "parameter period: %v", err)
			return
		}
		period = d
	}
	if err := checkQuota(quota, period, h.cfg.Refill); err != nil {
		badRequest(w, "%v", err)
		return
	}
	h.SetQuota(quota, period)
	fmt.Fprintf(w, "quota %d per %v\n", quota, period)
}

func (h *Handler) serveOutage(w http.ResponseWriter, r *http.Request) {
	q, ok := params(w, r, "status")
	if !ok {
		return
	}
	status, err := strconv.Atoi(q.Get("status"))
	if err == nil {
		err = checkOutage(status)
	}
	if err != nil {
		badRequest(w, "parameter status: %q: want 0, 429 or 503", q.Get("status"))
		return
	}
	h.SetOutage(status)
	fmt.Fprintf(w, "outage %d\n", status)
}

func (h *Handler) serveFaults(w http.ResponseWriter, r *http.Request) {
	q, ok := params(w, r, "latency", "jitter", "error_rate", "item_error_rate")
	if !ok {
		return
	}
	h.mu.Lock()
	latency, jitter, rate, itemRate := h.latency, h.jitter, h.errorRate, h.itemErrorRate
	h.mu.Unlock()
	latency, err := duration(q, "latency", latency)
	if err != nil {
		badRequest(w, "%v", err)
		return
	}
	jitter, err = duration(q, "jitter", jitter)
	if err != nil {
		badRequest(w, "%v", err)
		return
	}
	if rate, err = fraction(q, "error_rate", rate); err != nil {
		badRequest(w, "%v", err)
		return
	}
	if itemRate, err = fraction(q, "item_error_rate", itemRate); err != nil {
		badRequest(w, "%v", err)
		return
	}
	if q.Has("latency") || q.Has("jitter") {
		h.SetLatency(latency, jitter)
	}
	if q.Has("error_rate") {
		h.SetErrorRate(rate)
	}
	if q.Has("item_error_rate") {
		h.SetItemErrorRate(itemRate)
	}
	fmt.Fprintf(w, "latency %v jitter %v error_rate %v item_error_rate %v\n", latency, jitter, rate, itemRate)
}

func (h *Handler) serveReset(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawQuery != "" {
		badRequest(w, "reset takes no parameters")
		return
	}
	h.Reset()
	fmt.Fprintln(w, "stats reset")
}

func (h *Handler) serveReport(w http.ResponseWriter, r *http.Request) {
	q, ok := params(w, r, "client_throttled")
	if !ok {
		return
	}
	n, err := strconv.ParseInt(q.Get("client_throttled"), 10, 64)
	if err != nil || n < 0 {
		badRequest(w, "parameter client_throttled: %q: want a non-negative integer", q.Get("client_throttled"))
		return
	}
	h.ReportClientThrottled(n)
	fmt.Fprintf(w, "client_throttled +%d\n", n)
}

func (h *Handler) serveMark(w http.ResponseWriter, r *http.Request) {
	q, ok := params(w, r, "label")
	if !ok {
		return
	}
	label := q.Get("label")
	if label == "" || len(label) > 200 {
		badRequest(w, "parameter label: want 1 to 200 bytes")
		return
	}
	h.Mark(label)
	fmt.Fprintf(w, "marked %q\n", label)
}
