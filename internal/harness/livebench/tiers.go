package livebench

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// The priority tiers the priority scenarios' payloads name, in report
// order.
const (
	tierHigh = "high"
	tierLow  = "low"
)

// tierOfSeq is the tier of the element with sequence number seq when every
// highEvery-th element (seq 0, highEvery, 2×highEvery, ...) is high and the
// others are low.
func tierOfSeq(seq, highEvery int) string {
	if highEvery > 0 && seq%highEvery == 0 {
		return tierHigh
	}
	return tierLow
}

// tierPayload is the JSON payload of element seq: {"seq":N,"tier":"high"}.
func tierPayload(seq int, tier string) []byte {
	b, _ := json.Marshal(struct {
		Seq  int    `json:"seq"`
		Tier string `json:"tier"`
	}{seq, tier})
	return b
}

// seqOf is the sequence number in a payload made by tierPayload, and
// whether it has one.
func seqOf(payload []byte) (int, bool) {
	var p struct {
		Seq *int `json:"seq"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Seq == nil {
		return 0, false
	}
	return *p.Seq, true
}

// TierResult is one priority tier's share of a priority run, as
// results.json stores it.
type TierResult struct {
	Tier string `json:"tier"`
	// Sent counts the tier's elements the source published; Succeeded,
	// Expired (client-throttled: waited past --max_wait) and Other
	// (server-throttled or errors) the distinct ones in each output.
	Sent      int64 `json:"sent"`
	Succeeded int64 `json:"succeeded"`
	Expired   int64 `json:"expired"`
	Other     int64 `json:"other,omitempty"`
	// Waits counts the successes whose wait was measured, and MedianWait
	// and P99Wait are their median and 99th percentile, in seconds: from
	// the element's publication to the server's receipt of the call it
	// was accepted in.
	Waits      int64   `json:"waits"`
	MedianWait float64 `json:"median_wait_s"`
	P99Wait    float64 `json:"p99_wait_s"`
}

// sentElement is an element the priority source published.
type sentElement struct {
	tier string
	at   time.Time
}

// tierRun is what a priority run measures from: the elements published
// (indexed by sequence number), when the server received the first call of
// each that it accepted, and the sequence numbers found in each output of
// the pipeline.
type tierRun struct {
	sent     []sentElement
	accepted map[int]time.Time
	// outputs holds the sequence numbers in each output, by the
	// pipeline's output name (pipeline.OutSuccess, ...).
	outputs map[string]map[int]bool
}

// measure splits the run by tier, in the order high, then low, then any
// other tier in order of first publication. An element counts in an output
// only if it was published; a success's wait is measured only if the
// server accepted a call of it.
func (tr tierRun) measure(success, clientThrottled string, others ...string) []TierResult {
	var order []string
	byTier := map[string]*TierResult{}
	waits := map[string][]time.Duration{}
	for _, t := range []string{tierHigh, tierLow} {
		byTier[t] = &TierResult{Tier: t}
		order = append(order, t)
	}
	for seq, e := range tr.sent {
		r := byTier[e.tier]
		if r == nil {
			r = &TierResult{Tier: e.tier}
			byTier[e.tier] = r
			order = append(order, e.tier)
		}
		r.Sent++
		switch {
		case tr.outputs[success][seq]:
			r.Succeeded++
			if at, ok := tr.accepted[seq]; ok {
				waits[e.tier] = append(waits[e.tier], at.Sub(e.at))
			}
		case tr.outputs[clientThrottled][seq]:
			r.Expired++
		default:
			for _, o := range others {
				if tr.outputs[o][seq] {
					r.Other++
					break
				}
			}
		}
	}
	var out []TierResult
	for _, t := range order {
		r := byTier[t]
		ws := waits[t]
		slices.Sort(ws)
		r.Waits = int64(len(ws))
		r.MedianWait = percentile(ws, 0.5).Seconds()
		r.P99Wait = percentile(ws, 0.99).Seconds()
		out = append(out, *r)
	}
	return out
}

// percentile is the nearest-rank p-quantile (0 < p ≤ 1) of sorted: the
// smallest value with at least a fraction p of the values at or below it
// (the median of an even count is the lower middle value). It is 0 for no
// values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// The small tolerance keeps p×n from rounding up past a whole rank
	// (0.99 × 100 is not exactly 99 in floating point).
	rank := int(math.Ceil(p*float64(n) - 1e-9))
	return sorted[min(max(rank, 1), n)-1]
}

// tier returns the result of tier t among rs, and whether there is one.
func tier(rs []TierResult, t string) (TierResult, bool) {
	for _, r := range rs {
		if r.Tier == t {
			return r, true
		}
	}
	return TierResult{}, false
}
