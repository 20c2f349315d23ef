// Package testserver is an HTTP backend that really rejects requests over
// quota, for testing and demonstrating client-side throttling. Modelled on
// net/http/httptest: Handler is an http.Handler enforcing a token bucket,
// fixed window or GCRA quota, with injectable latency, errors and outages, stats at
// /stats and Prometheus metrics at /metrics; Server runs it on a loopback
// port; cmd/quotaserver wraps it in a binary.
//
// A test typically does:
//
//	srv, err := testserver.NewServer(testserver.Config{Quota: 5, Period: time.Minute})
//	if err != nil {
//		t.Fatal(err)
//	}
//	defer srv.Close()
//	resp, err := http.Post(srv.Endpoint(), "application/json", body)
//	// 200 echoing body five times, then 429 with Retry-After.
//	got := srv.Handler.Stats() // Accepted, Rejected, ...
//
// A request may cost more than one unit of quota: with Config.CostHeader
// or Config.CostField, Quota counts cost units (tokens, bytes, items) per
// Period, and a request's cost is read from a header or a JSON field. A
// JSON-array body is a batch: the answer is a JSON array with one entry
// per item, and Config.ItemErrorRate fails items one by one. See
// Handler.ServeHTTP for every answer.
package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// outageRetryAfter is the Retry-After answered during an outage.
const outageRetryAfter = 1

// ClientHeader is the request header that names the client sending an API
// request, such as "competitor". Stats and each second of its series count
// the answers to named requests per client as well (Stats.Clients), so that
// a test can tell one client's share of the quota from another's. Requests
// without it are counted in the totals only, as are requests naming a
// client beyond the first MaxClients names.
const ClientHeader = "X-Quota-Client"

// MaxClients is how many client names (see ClientHeader) a Handler counts
// separately.
const MaxClients = 16

// Handler is the quota server as an http.Handler: the quota'd API under
// /api, stats, metrics, admin endpoints and fault injection. Make one with
// NewHandler. It is safe for concurrent use.
//
// Routes:
//
//	/api, /api/...          any method: the quota'd API (see ServeHTTP)
//	GET  /stats             Stats as JSON
//	GET  /metrics           Prometheus text format
//	POST /admin/quota       ?quota=N&period=1s (either may be left out)
//	POST /admin/outage      ?status=503 (or 429; 0 ends the outage)
//	POST /admin/faults      ?latency=50ms&jitter=10ms&error_rate=0.3&item_error_rate=0.1 (any subset)
//	POST /admin/reset       zero the stats
//	POST /report            ?client_throttled=N: add client-side throttles to the stats
//	GET  /healthz           200
//	GET  /                  live chart page (HTML) of /stats: accepted, rejected, client-throttled per second
//	GET  /help              a text page listing these routes
//	GET  /web/...           the chart page's files (uPlot, embedded)
//
// Bad admin or report parameters are answered 400 with a message.
type Handler struct {
	cfg     Config // with defaults; only the fields fixed at creation are read
	cost    costRule
	mux     *http.ServeMux
	metrics *metrics

	mu            sync.Mutex
	lim           *limiter
	latency       time.Duration
	sigma         float64 // of a lognormal latency; 0 for a constant one
	jitter        time.Duration
	queue         *serviceQueue // Mode Queue; else nil
	errorRate     float64
	itemErrorRate float64
	outage        int
	errRand       *rand.Rand
	jitterRand    *rand.Rand
	itemRand      *rand.Rand
	rec           recorder
}

// NewHandler returns a Handler for cfg, or an error wrapping ErrConfig if a
// field is out of range.
func NewHandler(cfg Config) (*Handler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Handler{
		cfg:           cfg,
		cost:          costRule{header: cfg.CostHeader, field: cfg.CostField},
		lim:           newLimiter(cfg.Now(), cfg),
		latency:       cfg.Latency,
		sigma:         lognormalSigma(cfg.Latency, cfg.LatencyP99),
		jitter:        cfg.Jitter,
		errorRate:     cfg.ErrorRate,
		itemErrorRate: cfg.ItemErrorRate,
		errRand:       rand.New(rand.NewPCG(cfg.Seed, 1)),
		jitterRand:    rand.New(rand.NewPCG(cfg.Seed, 2)),
		itemRand:      rand.New(rand.NewPCG(cfg.Seed, 3)),
	}
	h.metrics = newMetrics(
		func() float64 { h.mu.Lock(); defer h.mu.Unlock(); return float64(h.lim.quota) },
		func() float64 { h.mu.Lock(); defer h.mu.Unlock(); return h.lim.period.Seconds() },
		func() float64 { h.mu.Lock(); defer h.mu.Unlock(); return float64(h.outage) },
	)
	if cfg.Mode == Queue {
		h.queue = &serviceQueue{interval: max(cfg.Period/time.Duration(cfg.Quota), 1)}
	}
	h.routes()
	return h, nil
}

// ServeHTTP serves the routes listed on Handler.
//
// An API request (/api or below, any method) is answered, in this order of
// precedence:
//   - during an outage, the outage status with Retry-After: 1;
//   - 413 if its body is longer than MaxBodyBytes;
//   - 400 if its cost (see Config.CostHeader and Config.CostField) is not
//     a non-negative integer, with a message saying which; counted in
//     Stats.BadCost, using no quota;
//   - 413 if its cost is more than the quota can ever accept at once (the
//     token bucket's capacity or the fixed window's quota, both Quota, or
//     GCRA's burst), with a message saying so; counted in
//     Stats.CostTooLarge, using no quota. Retrying such a request cannot
//     help, so it is never 429;
//   - 429 with Retry-After (whole seconds until the quota allows a request
//     of its cost, at least 1) if it does not fit the quota; a request
//     uses its whole cost or nothing;
//   - 500 for the ErrorRate fraction of under-quota requests;
//   - otherwise 200. A body that is a JSON array is a batch: the answer,
//     of Content-Type application/json, is a JSON array with one entry
//     per item, in order: the item as it came, or, for an item failed by
//     ItemErrorRate, {"status":500,"error":"testserver: injected item error"}.
//     Any other body is echoed with its Content-Type.
//
// A batch is answered as a whole up to the 200: one outage, body-size,
// quota or ErrorRate answer for the whole request, which costs the sum of
// its items' costs (or 1 with no cost configured).
//
// With Config.NoRetryAfter, the 429 and outage answers carry no
// Retry-After. With Config.Advertise, every answer tells the quota in that
// header family: its limit, what remains and when it is full again, as the
// quota stood when the request came (the reset counted from the answer);
// with Config.AdvertiseQuota, a limit other than the one enforced. A
// request naming its client with ClientHeader is counted for that client
// as well (Stats.Clients).
//
// Every API request is delayed by the latency (a lognormal draw with
// Config.LatencyP99) plus jitter before it is answered, whatever the
// answer, except a quota's 429 with Config.RefuseAtOnce. In Mode Queue
// nothing is refused for the quota: a request first waits for its turn in
// the queue, then the latency.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if err != nil && !errors.As(err, &tooBig) {
		http.Error(w, "testserver: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	var (
		items   []json.RawMessage
		batch   bool
		cost    = int64(1)
		costErr error
	)
	if tooBig == nil {
		items, batch = parseBatch(body)
		cost, costErr = h.cost.cost(r.Header, body, items, batch)
	}

	h.mu.Lock()
	now := h.cfg.Now()
	status, retryAfter, msg := http.StatusOK, int64(0), ""
	a := answer{outcome: accepted, cost: cost}
	var (
		failed    []bool        // of a batch's items
		queued    time.Duration // Mode Queue: the wait for its turn
		overQuota bool          // refused for the quota
	)
	switch {
	case h.outage != 0:
		status, retryAfter, msg = h.outage, outageRetryAfter, "testserver: outage"
		a.outcome = rejected
		if costErr != nil {
			a.cost = 1
		}
	case tooBig != nil:
		status, a.outcome = http.StatusRequestEntityTooLarge, tooLarge
		msg = fmt.Sprintf("testserver: body longer than %d bytes", h.cfg.MaxBodyBytes)
	case costErr != nil:
		status, a.outcome, msg = http.StatusBadRequest, badCost, "testserver: bad cost: "+costErr.Error()
	case cost > h.lim.maxCost():
		status, a.outcome = http.StatusRequestEntityTooLarge, costTooLarge
		msg = fmt.Sprintf("testserver: cost %d exceeds the quota's capacity of %d", cost, h.lim.maxCost())
	default:
		ok, wait := true, time.Duration(0)
		if h.queue != nil {
			queued = h.queue.admit(now, cost) // never refused: it waits its turn
		} else {
			ok, wait = h.lim.take(now, cost)
		}
		overQuota = !ok
		if !ok {
			status, retryAfter, msg = http.StatusTooManyRequests, retryAfterSeconds(wait), "testserver: over quota"
			a.outcome = rejected
		} else if h.errRand.Float64() < h.errorRate {
			status, a.outcome, msg = http.StatusInternalServerError, errored, "testserver: injected error"
		} else if batch {
			a.items = int64(len(items))
			failed, a.itemErrors = h.failItems(len(items))
		} else {
			a.items = 1
		}
	}
	var (
		adv    quotaState
		hasAdv bool
		period = h.lim.period
	)
	if h.cfg.Advertise != AdvertiseNone {
		adv, hasAdv = h.lim.state(now)
		if hasAdv && h.cfg.AdvertiseQuota > 0 {
			adv = adv.as(int64(h.cfg.AdvertiseQuota))
		}
	}
	delay := queued + latencyDraw(h.jitterRand, h.latency, h.sigma)
	if j := h.jitterRand.Int64N(int64(max(h.jitter, 1))); h.jitter > 0 {
		delay += time.Duration(j)
	}
	if h.cfg.RefuseAtOnce && overQuota {
		delay = 0 // the draws are made all the same, so a seed gives the same latencies
	}
	h.rec.add(now, a, r.Header.Get(ClientHeader))
	h.rec.delays.add(delay)
	h.metrics.count(a)
	h.mu.Unlock()

	if h.cfg.Logger.Enabled(r.Context(), slog.LevelDebug) {
		h.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "api request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Int64("cost", a.cost), slog.Int64("items", a.items),
			slog.Int64("item_errors", a.itemErrors), slog.Duration("delay", delay))
	}
	if !sleep(r.Context(), delay) {
		return // the client has gone
	}
	if hasAdv {
		advertise(w.Header(), h.cfg.Advertise, adv, period, delay, h.cfg.Now())
	}

	if status != http.StatusOK {
		if retryAfter > 0 && !h.cfg.NoRetryAfter {
			w.Header().Set("Retry-After", strconv.FormatInt(retryAfter, 10))
		}
		http.Error(w, msg, status)
		return
	}
	if batch {
		body = batchAnswer(items, failed)
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header()["Content-Type"] = r.Header["Content-Type"] // nil stops sniffing
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// failItems draws which of the n items of a batch fail by the item error
// rate, and how many. h.mu must be held.
func (h *Handler) failItems(n int) (failed []bool, count int64) {
	failed = make([]bool, n)
	for i := range failed {
		if failed[i] = h.itemRand.Float64() < h.itemErrorRate; failed[i] {
			count++
		}
	}
	return failed, count
}

// sleep waits for d or until ctx is done, reporting whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// SetQuota changes the quota at run time; quota 0 means unlimited and
// period 0 means DefaultPeriod. Requests already accepted count against the
// new quota: a token bucket that had handed out u tokens has quota-u left
// (at least 0), a fixed window keeps its counter (a new period starts a new
// window now), and GCRA keeps its burst and the requests it is still
// spacing out: if its theoretical arrival time was u emission intervals
// ahead, it is u intervals of the new rate ahead. SetQuota panics if quota is negative, period is negative
// or quota per period is too large to represent.
func (h *Handler) SetQuota(quota int, period time.Duration) {
	if period == 0 {
		period = DefaultPeriod
	}
	if err := checkQuota(quota, period, h.cfg.Refill); err != nil {
		panic("testserver.SetQuota: " + err.Error())
	}
	h.mu.Lock()
	h.lim.set(h.cfg.Now(), quota, period)
	h.mu.Unlock()
	h.cfg.Logger.Info("quota changed", "quota", quota, "period", period, "mode", h.cfg.Mode)
}

// SetOutage starts an outage in which every API request is answered status
// (429 or 503) with Retry-After: 1, or ends it if status is 0. Outage
// answers count as rejected and use no quota. SetOutage panics for any
// other status.
func (h *Handler) SetOutage(status int) {
	if err := checkOutage(status); err != nil {
		panic("testserver.SetOutage: " + err.Error())
	}
	h.mu.Lock()
	h.outage = status
	h.mu.Unlock()
	h.cfg.Logger.Info("outage changed", "status", status)
}

// Outage returns the current outage status, or 0 if there is no outage.
func (h *Handler) Outage() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.outage
}

// SetLatency changes the delay added to every API request: latency plus a
// uniformly random [0, jitter); with Config.LatencyP99, latency is the new
// median and the spread (the ratio of p99 to median) is kept. It panics
// if either is negative.
func (h *Handler) SetLatency(latency, jitter time.Duration) {
	if latency < 0 || jitter < 0 {
		panic(fmt.Sprintf("testserver.SetLatency: negative latency %v or jitter %v", latency, jitter))
	}
	h.mu.Lock()
	h.latency, h.jitter = latency, jitter
	h.mu.Unlock()
	h.cfg.Logger.Info("latency changed", "latency", latency, "jitter", jitter)
}

// SetErrorRate changes the fraction of under-quota API requests answered
// 500. It panics unless 0 ≤ rate ≤ 1.
func (h *Handler) SetErrorRate(rate float64) {
	if !(rate >= 0 && rate <= 1) {
		panic(fmt.Sprintf("testserver.SetErrorRate: rate %v is not in [0, 1]", rate))
	}
	h.mu.Lock()
	h.errorRate = rate
	h.mu.Unlock()
	h.cfg.Logger.Info("error rate changed", "error_rate", rate)
}

// SetItemErrorRate changes the probability that each item of a batch
// answered 200 fails (see Config.ItemErrorRate). It panics unless
// 0 ≤ rate ≤ 1.
func (h *Handler) SetItemErrorRate(rate float64) {
	if !(rate >= 0 && rate <= 1) {
		panic(fmt.Sprintf("testserver.SetItemErrorRate: rate %v is not in [0, 1]", rate))
	}
	h.mu.Lock()
	h.itemErrorRate = rate
	h.mu.Unlock()
	h.cfg.Logger.Info("item error rate changed", "item_error_rate", rate)
}

// Stats returns a snapshot of the counts since the Handler was made or last
// Reset, with the current quota.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.rec.totals
	s.Quota = h.lim.quota
	s.Period = h.lim.period.String()
	s.Mode = h.cfg.Mode
	if h.cfg.Mode == GCRA {
		s.Burst = max(h.cfg.Burst, 1)
	}
	if h.cfg.WindowJitter > 0 {
		s.WindowJitter = h.cfg.WindowJitter.String()
	}
	s.CostHeader, s.CostField = h.cfg.CostHeader, h.cfg.CostField
	s.Outage = h.outage
	s.Clients = maps.Clone(h.rec.totals.Clients)
	s.Series = append([]Second{}, h.rec.series...)
	s.Marks = slices.Clone(h.rec.marks)
	s.DelayP50Ms = float64(h.rec.delays.quantile(0.5)) / float64(time.Millisecond)
	s.DelayP99Ms = float64(h.rec.delays.quantile(0.99)) / float64(time.Millisecond)
	for i := range s.Series {
		s.Series[i].Clients = maps.Clone(s.Series[i].Clients)
	}
	return s
}

// Span returns when the handler saw client's API requests (see
// ClientHeader): its first and its last accepted, as precise as the
// handler's clock, unlike the per-second Series. It is zero for a client
// not counted in Stats.Clients, and after Reset.
func (h *Handler) Span(client string) Span {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rec.spans[client]
}

// Reset zeroes the stats, the series, the spans and the Prometheus counters. It does
// not touch the quota or the faults.
func (h *Handler) Reset() {
	h.mu.Lock()
	h.rec = recorder{}
	h.metrics.zero()
	h.mu.Unlock()
	h.cfg.Logger.Info("stats reset")
}

// Mark labels the current second, by the handler's clock, for the chart
// page, which draws it as a vertical line with the label: the start of a
// run, say. POST /mark?label=... does the same. The newest 100 marks are
// kept until Reset.
func (h *Handler) Mark(label string) {
	h.mu.Lock()
	h.rec.mark(h.cfg.Now(), label)
	h.mu.Unlock()
}

// ReportClientThrottled adds n client-side throttles to the stats at the
// current time, as POST /report?client_throttled=n does. It panics if n is
// negative.
func (h *Handler) ReportClientThrottled(n int64) {
	if n < 0 {
		panic(fmt.Sprintf("testserver.ReportClientThrottled: n %d is negative", n))
	}
	h.mu.Lock()
	h.rec.addClientThrottled(h.cfg.Now(), n)
	h.metrics.clientThrottled.WithLabelValues().Add(float64(n))
	h.mu.Unlock()
}

func checkOutage(status int) error {
	switch status {
	case 0, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return nil
	}
	return fmt.Errorf("status %d: want 0, 429 or 503", status)
}
