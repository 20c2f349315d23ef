package sharedquota

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

// Entry is one key=value entry of a rate-limit descriptor.
type Entry struct {
	Key, Value string
}

// ParseEntries parses descriptor entries written as key=value pairs
// separated by commas, such as "quota=translate,project=p1", in order.
// Spaces around keys and values are dropped. It returns an error beginning
// "sharedquota: descriptor" for an empty list, or an entry without "=" or
// with an empty key or value.
func ParseEntries(s string) ([]Entry, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("sharedquota: descriptor: no entries, want key=value[,key=value...]")
	}
	var es []Entry
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("sharedquota: descriptor entry %q: want key=value", part)
		}
		es = append(es, Entry{Key: k, Value: v})
	}
	return es, nil
}

// EnvoyConfig configures an [Envoy] quota.
type EnvoyConfig struct {
	// Addr is the gRPC address of the rate-limit service: host:port, or
	// any target grpc.NewClient accepts.
	Addr string
	// Domain is the domain of the service's configuration that holds the
	// limits.
	Domain string
	// Entries are the descriptor's entries, in order, before the key's.
	Entries []Entry
	// KeyEntry, when set, is the name of a last entry whose value is the key
	// given to Take, so that each key has its own limit. When empty, the
	// descriptor is Entries alone for every key.
	KeyEntry string
	// DialOptions are passed to grpc.NewClient. Nil means a plaintext
	// connection (insecure.NewCredentials), as inside a cluster, that
	// reconnects to a restarted service within 2 s (gRPC's default backoff
	// grows to 2 minutes, refusing every Take meanwhile).
	DialOptions []grpc.DialOption
}

// DefaultRetry is how long [Envoy] waits after a refusal whose answer does
// not say when the limit resets.
const DefaultRetry = time.Second

// Envoy is a [adaptive.Quota] kept by Envoy's rate-limit service, asked over
// gRPC (RLS v3 ShouldRateLimit) with the domain and one descriptor from the
// config and hits_addend = the number of permits asked. The service counts
// permits in fixed windows of its configured unit (second, minute, hour,
// day) and answers all or nothing.
//
// How a batch uses it. The reference service adds hits_addend to the
// window's counter even when it refuses the request, so after one refusal
// the counter is past the limit and every later request in that window is
// refused too: asking again with fewer permits (halving) cannot succeed and
// only inflates the counter. So Take asks once and never retries. On
// OVER_LIMIT it grants nothing and sets RetryAt from duration_until_reset,
// the start of the next window; until then it answers 0 for that key
// without a round trip. To lose as little as possible to refusals it asks
// for no more than the service said was left (limit_remaining) in the
// current window, and never for more than the limit (requests_per_unit),
// learnt from earlier answers for the same key: a batch larger than that is
// granted in part. What can still be lost is the remainder of a window when
// another client spent it meanwhile: fewer permits than one batch per
// window, so keep batches small next to the limit per window.
//
// A descriptor that matches no limit in the service's configuration is
// granted in full. Envoy is safe for concurrent use. Create it with
// [NewEnvoy] and Close it when done.
type Envoy struct {
	cfg    EnvoyConfig
	conn   *grpc.ClientConn
	client rlsv3.RateLimitServiceClient

	mu    sync.Mutex
	known map[string]window // what the last answer for a key said
}

// window is what an answer said about a key's limit.
type window struct {
	limit     int       // requests_per_unit, the most one window grants; 0 if unknown
	end       time.Time // when the current window ends
	remaining int       // permits left in it when the answer came
}

// NewEnvoy returns an Envoy quota for cfg, or an error beginning
// "sharedquota:" if cfg is invalid. It connects lazily, on the first Take.
func NewEnvoy(cfg EnvoyConfig) (*Envoy, error) {
	if cfg.Addr == "" {
		return nil, errors.New("sharedquota: Envoy: Addr is required")
	}
	if cfg.Domain == "" {
		return nil, errors.New("sharedquota: Envoy: Domain is required")
	}
	if len(cfg.Entries) == 0 && cfg.KeyEntry == "" {
		return nil, errors.New("sharedquota: Envoy: Entries or KeyEntry is required")
	}
	for _, e := range cfg.Entries {
		if e.Key == "" || e.Value == "" {
			return nil, fmt.Errorf("sharedquota: Envoy: descriptor entry %q=%q: key and value must not be empty", e.Key, e.Value)
		}
	}
	opts := cfg.DialOptions
	if opts == nil {
		opts = []grpc.DialOption{
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithConnectParams(grpc.ConnectParams{
				Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
				MinConnectTimeout: 2 * time.Second,
			}),
		}
	}
	conn, err := grpc.NewClient(cfg.Addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("sharedquota: Envoy: %w", err)
	}
	return &Envoy{cfg: cfg, conn: conn, client: rlsv3.NewRateLimitServiceClient(conn), known: make(map[string]window)}, nil
}

// Take asks the service for n permits for key in at most one round trip; see
// [Envoy] for how many it asks for and what it grants.
func (e *Envoy) Take(ctx context.Context, key string, n int, now time.Time) (adaptive.Grant, error) {
	if n <= 0 {
		return adaptive.Grant{}, nil
	}
	ask := min(n, math.MaxInt32) // hits_addend is a uint32
	e.mu.Lock()
	w := e.known[key]
	e.mu.Unlock()
	if w.limit > 0 {
		ask = min(ask, w.limit)
	}
	if now.Before(w.end) {
		if w.remaining == 0 {
			return adaptive.Grant{RetryAt: w.end}, nil
		}
		ask = min(ask, w.remaining)
	}

	resp, err := e.client.ShouldRateLimit(ctx, e.request(key, ask))
	if err != nil {
		return adaptive.Grant{}, wrap(ctx, err, "envoy: taking %d for %q", ask, key)
	}
	var g adaptive.Grant
	switch resp.GetOverallCode() {
	case rlsv3.RateLimitResponse_OK:
		g.Granted = ask
	case rlsv3.RateLimitResponse_OVER_LIMIT:
	default:
		return adaptive.Grant{}, fmt.Errorf("sharedquota: envoy: taking %d for %q: overall code %v", ask, key, resp.GetOverallCode())
	}
	w = e.learn(key, resp, now)
	if g.Granted < n {
		switch {
		case w.remaining == 0 && now.Before(w.end):
			g.RetryAt = w.end // the window is spent
		case g.Granted == 0:
			g.RetryAt = now.Add(DefaultRetry) // refused, and the answer did not say until when
		default:
			g.RetryAt = now // granted the limit or what was left of it: more may be left
		}
	}
	return g, nil
}

// request builds the RLS request for ask permits for key.
func (e *Envoy) request(key string, ask int) *rlsv3.RateLimitRequest {
	entries := make([]*ratelimitv3.RateLimitDescriptor_Entry, 0, len(e.cfg.Entries)+1)
	for _, en := range e.cfg.Entries {
		entries = append(entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: en.Key, Value: en.Value})
	}
	if e.cfg.KeyEntry != "" {
		entries = append(entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: e.cfg.KeyEntry, Value: key})
	}
	return &rlsv3.RateLimitRequest{
		Domain:      e.cfg.Domain,
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: entries}},
		HitsAddend:  uint32(ask),
	}
}

// learn records what resp says about key's limit and current window, and
// returns it. With several limited descriptors, the smallest limit counts,
// and a refusal lasts until the last refusing window resets.
func (e *Envoy) learn(key string, resp *rlsv3.RateLimitResponse, now time.Time) window {
	var w window
	var overEnd, okEnd time.Time
	okRemaining := math.MaxInt
	for _, s := range resp.GetStatuses() {
		lim := s.GetCurrentLimit()
		if lim == nil { // no limit matched: unlimited
			continue
		}
		if per := int(min(lim.GetRequestsPerUnit(), math.MaxInt32)); per > 0 && (w.limit == 0 || per < w.limit) {
			w.limit = per
		}
		if s.GetDurationUntilReset() == nil {
			continue
		}
		end := now.Add(s.GetDurationUntilReset().AsDuration())
		if s.GetCode() == rlsv3.RateLimitResponse_OVER_LIMIT {
			if end.After(overEnd) {
				overEnd = end
			}
			continue
		}
		if okEnd.IsZero() || end.Before(okEnd) {
			okEnd = end
		}
		okRemaining = min(okRemaining, int(s.GetLimitRemaining()))
	}
	switch {
	case !overEnd.IsZero():
		w.end, w.remaining = overEnd, 0
	case !okEnd.IsZero():
		w.end, w.remaining = okEnd, okRemaining
	}
	e.mu.Lock()
	if w == (window{}) {
		delete(e.known, key)
	} else {
		e.known[key] = w
	}
	e.mu.Unlock()
	return w
}

// Close closes the connection to the service.
func (e *Envoy) Close() error { return e.conn.Close() }
