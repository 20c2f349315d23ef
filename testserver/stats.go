package testserver

import (
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// maxSeries is how many seconds of per-second stats a Handler keeps.
const maxSeries = 3600

// Stats is a snapshot of what a Handler has answered since it was made or
// last Reset. Its JSON form is served at GET /stats.
type Stats struct {
	// Accepted counts API requests answered 200.
	Accepted int64 `json:"accepted"`
	// Rejected counts API requests answered 429 (over quota) or with the
	// outage status (429 or 503).
	Rejected int64 `json:"rejected"`
	// Errors counts API requests answered 500 by the injected error rate.
	Errors int64 `json:"errors"`
	// TooLarge counts API requests answered 413 because of their body size.
	TooLarge int64 `json:"too_large"`
	// ClientThrottled sums the client-side throttles reported with
	// POST /report.
	ClientThrottled int64 `json:"client_throttled"`
	// Quota is the current quota per Period; 0 means unlimited.
	Quota int `json:"quota"`
	// Period is the current quota period, as time.Duration.String.
	Period string `json:"period"`
	// Mode is the quota algorithm.
	Mode Mode `json:"mode"`
	// Burst is how many requests GCRA accepts back to back after an idle
	// period, 1 for none; 0 in the other modes.
	Burst int `json:"burst,omitempty"`
	// Outage is the status answered to every API request, or 0.
	Outage int `json:"outage"`
	// Clients counts the API requests that named their client with
	// ClientHeader, by client name; nil if there were none.
	Clients map[string]Counts `json:"clients,omitempty"`
	// Series holds per-second counts, oldest first, for seconds (by the
	// handler's clock) in which something was counted; at most the last
	// hour is kept.
	Series []Second `json:"series"`
}

// Second holds the counts of one second of a Stats series.
type Second struct {
	// T is the second, in Unix seconds.
	T               int64 `json:"t"`
	Accepted        int64 `json:"accepted"`
	Rejected        int64 `json:"rejected"`
	Errors          int64 `json:"errors"`
	ClientThrottled int64 `json:"client_throttled"`
	// Clients counts the second's requests that named their client with
	// ClientHeader, by client name; nil if there were none.
	Clients map[string]Counts `json:"clients,omitempty"`
}

// Counts are the answers to the API requests of one client (see
// ClientHeader), counted as in Stats.
type Counts struct {
	Accepted int64 `json:"accepted"`
	Rejected int64 `json:"rejected"`
	Errors   int64 `json:"errors"`
}

// outcome is what an API request was answered, for stats and metrics.
type outcome int

const (
	accepted outcome = iota
	rejected
	errored
	tooLarge
)

var outcomeLabels = [...]string{accepted: "accepted", rejected: "rejected", errored: "error", tooLarge: "too_large"}

// recorder keeps the counts behind Stats. It is not safe for concurrent use;
// Handler guards it with its mutex.
type recorder struct {
	totals Stats    // only the counters are used
	series []Second // sorted by T
}

// bucket returns the series entry for the second of now, adding it if
// needed.
func (r *recorder) bucket(now time.Time) *Second {
	t := now.Unix()
	n := len(r.series)
	if n > 0 && r.series[n-1].T == t {
		return &r.series[n-1]
	}
	i := sort.Search(n, func(i int) bool { return r.series[i].T >= t })
	if i < n && r.series[i].T == t {
		return &r.series[i]
	}
	r.series = append(r.series, Second{})
	copy(r.series[i+1:], r.series[i:])
	r.series[i] = Second{T: t}
	if len(r.series) > maxSeries {
		drop := len(r.series) - maxSeries
		r.series = append(r.series[:0], r.series[drop:]...)
		i -= drop
		if i < 0 {
			return &Second{} // older than the kept series: count totals only
		}
	}
	return &r.series[i]
}

// add counts an answer at now, and for client too unless it is "" (see
// ClientHeader).
func (r *recorder) add(now time.Time, o outcome, client string) {
	if o == tooLarge {
		r.totals.TooLarge++
		return
	}
	sec := r.bucket(now)
	switch o {
	case accepted:
		r.totals.Accepted++
		sec.Accepted++
	case rejected:
		r.totals.Rejected++
		sec.Rejected++
	case errored:
		r.totals.Errors++
		sec.Errors++
	}
	if client == "" {
		return
	}
	if _, ok := r.totals.Clients[client]; !ok && len(r.totals.Clients) >= MaxClients {
		return
	}
	r.totals.Clients = addTo(r.totals.Clients, client, o)
	sec.Clients = addTo(sec.Clients, client, o)
}

// addTo counts outcome o for client in m, making m if it is nil.
func addTo(m map[string]Counts, client string, o outcome) map[string]Counts {
	if m == nil {
		m = map[string]Counts{}
	}
	c := m[client]
	switch o {
	case accepted:
		c.Accepted++
	case rejected:
		c.Rejected++
	case errored:
		c.Errors++
	}
	m[client] = c
	return m
}

func (r *recorder) addClientThrottled(now time.Time, n int64) {
	r.totals.ClientThrottled += n
	r.bucket(now).ClientThrottled += n
}

// metrics holds a Handler's private Prometheus registry.
type metrics struct {
	reg             *prometheus.Registry
	requests        *prometheus.CounterVec
	clientThrottled *prometheus.CounterVec // no labels, so that it can be reset
}

// newMetrics registers the counters and the gauges, which read state
// through the given functions (each must be safe for concurrent use).
func newMetrics(quota, periodSeconds, outage func() float64) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotaserver_requests_total",
			Help: "API requests by outcome: accepted (200), rejected (429 or outage), error (injected 500), too_large (413).",
		}, []string{"outcome"}),
		clientThrottled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotaserver_client_throttled_total",
			Help: "Client-side throttles reported with POST /report.",
		}, nil),
	}
	m.reg.MustRegister(
		m.requests,
		m.clientThrottled,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quotaserver_quota",
			Help: "Requests allowed per quota period; 0 means unlimited.",
		}, quota),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quotaserver_quota_period_seconds",
			Help: "Length of the quota period in seconds.",
		}, periodSeconds),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quotaserver_outage_status",
			Help: "HTTP status answered to every API request during an outage; 0 when there is none.",
		}, outage),
	)
	m.zero()
	return m
}

// zero resets the counters, keeping every outcome label present at 0.
func (m *metrics) zero() {
	m.requests.Reset()
	for _, l := range outcomeLabels {
		m.requests.WithLabelValues(l)
	}
	m.clientThrottled.Reset()
	m.clientThrottled.WithLabelValues()
}
