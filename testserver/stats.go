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
	// BadCost counts API requests answered 400 because their cost (see
	// Config.CostHeader and Config.CostField) is not a non-negative
	// integer. They use no quota.
	BadCost int64 `json:"bad_cost"`
	// CostTooLarge counts API requests answered 413 because their cost is
	// more than the quota could ever accept at once (see
	// Handler.ServeHTTP). They use no quota.
	CostTooLarge int64 `json:"cost_too_large"`
	// AcceptedCost, RejectedCost and ErrorCost sum the costs of the
	// requests counted in Accepted, Rejected and Errors. With no cost
	// configured every request costs 1, so they equal those counts. The
	// quota used is AcceptedCost + ErrorCost; an outage answer to a
	// request whose cost could not be read counts 1.
	AcceptedCost int64 `json:"accepted_cost"`
	RejectedCost int64 `json:"rejected_cost"`
	ErrorCost    int64 `json:"error_cost"`
	// Items counts the items of the requests answered 200: 1 for a
	// request that is not a batch, the array's length for a batch.
	Items int64 `json:"items"`
	// ItemErrors counts the items of those that failed by
	// Config.ItemErrorRate; it is part of Items.
	ItemErrors int64 `json:"item_errors"`
	// ClientThrottled sums the client-side throttles reported with
	// POST /report.
	ClientThrottled int64 `json:"client_throttled"`
	// Quota is the current quota per Period, in requests or, with
	// CostHeader or CostField set, in cost units; 0 means unlimited.
	Quota int `json:"quota"`
	// Period is the current quota period, as time.Duration.String.
	Period string `json:"period"`
	// Mode is the quota algorithm.
	Mode Mode `json:"mode"`
	// Burst is how many requests (or cost units) GCRA accepts back to
	// back after an idle period, 1 for none; 0 in the other modes.
	Burst int `json:"burst,omitempty"`
	// WindowJitter is Config.WindowJitter, as time.Duration.String: how
	// much longer than Period a drifting fixed window may last; "" for
	// none.
	WindowJitter string `json:"window_jitter,omitempty"`
	// CostHeader and CostField are Config's: how a request's cost is
	// read; both "" when every request costs 1.
	CostHeader string `json:"cost_header,omitempty"`
	CostField  string `json:"cost_field,omitempty"`
	// Outage is the status answered to every API request, or 0.
	Outage int `json:"outage"`
	// Clients counts the API requests that named their client with
	// ClientHeader, by client name; nil if there were none.
	Clients map[string]Counts `json:"clients,omitempty"`
	// Series holds per-second counts, oldest first, for seconds (by the
	// handler's clock) in which something was counted; at most the last
	// hour is kept.
	Series []Second `json:"series"`
	// DelayP50Ms and DelayP99Ms are the median and 99th percentile of
	// how long the API requests' answers took the server, in
	// milliseconds (to within a hundredth): the latency, and in Mode
	// Queue the wait for a turn, whether or not the client waited for
	// the answer. 0 before the first request.
	DelayP50Ms float64 `json:"delay_p50_ms"`
	DelayP99Ms float64 `json:"delay_p99_ms"`
	// Marks are the labels set with Handler.Mark, oldest first; at most
	// maxMarks are kept.
	Marks []Mark `json:"marks,omitempty"`
}

// Mark labels a second of the series, such as the start of a run; the
// chart page draws it as a vertical line.
type Mark struct {
	// T is the second, in Unix seconds.
	T     int64  `json:"t"`
	Label string `json:"label"`
}

// maxMarks is how many marks a Handler keeps, the newest.
const maxMarks = 100

// Second holds the counts of one second of a Stats series.
type Second struct {
	// T is the second, in Unix seconds.
	T               int64 `json:"t"`
	Accepted        int64 `json:"accepted"`
	Rejected        int64 `json:"rejected"`
	Errors          int64 `json:"errors"`
	ClientThrottled int64 `json:"client_throttled"`
	// AcceptedCost, RejectedCost and ErrorCost are as in Stats.
	AcceptedCost int64 `json:"accepted_cost"`
	RejectedCost int64 `json:"rejected_cost"`
	ErrorCost    int64 `json:"error_cost"`
	// Clients counts the second's requests that named their client with
	// ClientHeader, by client name; nil if there were none.
	Clients map[string]Counts `json:"clients,omitempty"`
}

// Counts are the answers to the API requests of one client (see
// ClientHeader), counted as in Stats.
type Counts struct {
	Accepted     int64 `json:"accepted"`
	Rejected     int64 `json:"rejected"`
	Errors       int64 `json:"errors"`
	AcceptedCost int64 `json:"accepted_cost"`
	RejectedCost int64 `json:"rejected_cost"`
	ErrorCost    int64 `json:"error_cost"`
}

// outcome is what an API request was answered, for stats and metrics.
type outcome int

const (
	accepted outcome = iota
	rejected
	errored
	tooLarge     // body over MaxBodyBytes
	badCost      // 400: the cost is not a non-negative integer
	costTooLarge // 413: the cost can never fit the quota
)

var outcomeLabels = [...]string{
	accepted: "accepted", rejected: "rejected", errored: "error", tooLarge: "too_large",
	badCost: "bad_cost", costTooLarge: "cost_too_large",
}

// costLabels are the outcomes whose cost is counted.
var costLabels = [...]string{accepted: "accepted", rejected: "rejected", errored: "error"}

// itemLabels are the outcomes of a batch's items in the items counter.
var itemLabels = [...]string{"ok", "error"}

// answer is what an API request was answered, for stats and metrics.
type answer struct {
	outcome    outcome
	cost       int64 // counted for accepted, rejected and errored
	items      int64 // accepted only: 1, or a batch's length
	itemErrors int64 // accepted only: items failed by ItemErrorRate
}

// Span is when a Handler saw one client's API requests (see ClientHeader),
// by the handler's clock: precise where the per-second Series is not.
type Span struct {
	// First is when the client's first request counted in Stats.Clients
	// came (accepted, rejected or errored); zero if none has.
	First time.Time
	// LastAccepted is when its last request answered 200 came; zero if
	// none has.
	LastAccepted time.Time
}

// recorder keeps the counts behind Stats. It is not safe for concurrent use;
// Handler guards it with its mutex.
type recorder struct {
	totals Stats           // only the counters are used
	series []Second        // sorted by T
	marks  []Mark          // in the order set, at most maxMarks
	spans  map[string]Span // for the clients in totals.Clients
	delays delayHistogram
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
func (r *recorder) add(now time.Time, a answer, client string) {
	switch a.outcome {
	case tooLarge:
		r.totals.TooLarge++
		return
	case badCost:
		r.totals.BadCost++
		return
	case costTooLarge:
		r.totals.CostTooLarge++
		return
	}
	sec := r.bucket(now)
	switch a.outcome {
	case accepted:
		r.totals.Accepted++
		r.totals.AcceptedCost += a.cost
		r.totals.Items += a.items
		r.totals.ItemErrors += a.itemErrors
		sec.Accepted++
		sec.AcceptedCost += a.cost
	case rejected:
		r.totals.Rejected++
		r.totals.RejectedCost += a.cost
		sec.Rejected++
		sec.RejectedCost += a.cost
	case errored:
		r.totals.Errors++
		r.totals.ErrorCost += a.cost
		sec.Errors++
		sec.ErrorCost += a.cost
	}
	if client == "" {
		return
	}
	if _, ok := r.totals.Clients[client]; !ok && len(r.totals.Clients) >= MaxClients {
		return
	}
	r.totals.Clients = addTo(r.totals.Clients, client, a)
	sec.Clients = addTo(sec.Clients, client, a)
	if r.spans == nil {
		r.spans = map[string]Span{}
	}
	sp := r.spans[client]
	if sp.First.IsZero() {
		sp.First = now
	}
	if a.outcome == accepted {
		sp.LastAccepted = now
	}
	r.spans[client] = sp
}

// addTo counts answer a for client in m, making m if it is nil.
func addTo(m map[string]Counts, client string, a answer) map[string]Counts {
	if m == nil {
		m = map[string]Counts{}
	}
	c := m[client]
	switch a.outcome {
	case accepted:
		c.Accepted++
		c.AcceptedCost += a.cost
	case rejected:
		c.Rejected++
		c.RejectedCost += a.cost
	case errored:
		c.Errors++
		c.ErrorCost += a.cost
	}
	m[client] = c
	return m
}

// mark adds a mark at now, dropping the oldest beyond maxMarks.
func (r *recorder) mark(now time.Time, label string) {
	r.marks = append(r.marks, Mark{T: now.Unix(), Label: label})
	if len(r.marks) > maxMarks {
		r.marks = append(r.marks[:0], r.marks[len(r.marks)-maxMarks:]...)
	}
}

func (r *recorder) addClientThrottled(now time.Time, n int64) {
	r.totals.ClientThrottled += n
	r.bucket(now).ClientThrottled += n
}

// count adds answer a to the counters.
func (m *metrics) count(a answer) {
	m.requests.WithLabelValues(outcomeLabels[a.outcome]).Inc()
	if int(a.outcome) < len(costLabels) {
		m.cost.WithLabelValues(costLabels[a.outcome]).Add(float64(a.cost))
	}
	if a.outcome == accepted {
		m.items.WithLabelValues(itemLabels[0]).Add(float64(a.items - a.itemErrors))
		m.items.WithLabelValues(itemLabels[1]).Add(float64(a.itemErrors))
	}
}

// metrics holds a Handler's private Prometheus registry.
type metrics struct {
	reg             *prometheus.Registry
	requests        *prometheus.CounterVec
	cost            *prometheus.CounterVec
	items           *prometheus.CounterVec
	clientThrottled *prometheus.CounterVec // no labels, so that it can be reset
}

// newMetrics registers the counters and the gauges, which read state
// through the given functions (each must be safe for concurrent use).
func newMetrics(quota, periodSeconds, outage func() float64) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotaserver_requests_total",
			Help: "API requests by outcome: accepted (200), rejected (429 or outage), error (injected 500), too_large (413 body), bad_cost (400), cost_too_large (413 cost).",
		}, []string{"outcome"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotaserver_cost_total",
			Help: "Cost units of API requests by outcome: accepted (200), rejected (429 or outage), error (injected 500). Each request costs 1 unless a cost header or field is configured.",
		}, []string{"outcome"}),
		items: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotaserver_items_total",
			Help: "Items of API requests answered 200 (a batch's elements, or 1 for a request that is not a batch) by outcome: ok, or error (injected item error).",
		}, []string{"outcome"}),
		clientThrottled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quotaserver_client_throttled_total",
			Help: "Client-side throttles reported with POST /report.",
		}, nil),
	}
	m.reg.MustRegister(
		m.requests,
		m.cost,
		m.items,
		m.clientThrottled,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quotaserver_quota",
			Help: "Requests (or cost units, if a cost header or field is configured) allowed per quota period; 0 means unlimited.",
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
	m.cost.Reset()
	for _, l := range costLabels {
		m.cost.WithLabelValues(l)
	}
	m.items.Reset()
	for _, l := range itemLabels {
		m.items.WithLabelValues(l)
	}
	m.clientThrottled.Reset()
	m.clientThrottled.WithLabelValues()
}
