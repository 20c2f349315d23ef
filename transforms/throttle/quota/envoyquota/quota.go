package envoyquota

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

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// Entry is one key=value entry of a rate-limit descriptor.
type Entry struct {
	Key, Value string
}

// ParseEntries parses descriptor entries written as key=value pairs
// separated by commas, such as "quota=translate,project=p1", in order.
// Spaces around keys and values are dropped. It returns an error beginning
// "envoyquota: descriptor" for an empty list, or an entry without "=" or
// with an empty key or value.
func ParseEntries(s string) ([]Entry, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("envoyquota: descriptor: no entries, want key=value[,key=value...]")
	}
	var es []Entry
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("envoyquota: descriptor entry %q: want key=value", part)
		}
		es = append(es, Entry{Key: k, Value: v})
	}
	return es, nil
}

// Config configures a [Quota].
type Config struct {
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

// MaxChunks is the most chunks, each a copy of the descriptor, one Take asks
// for in one request; see [Quota].
const MaxChunks = 64

// DefaultRetry is how long [Quota] waits after a refusal whose answer does
// not say when the limit resets.
const DefaultRetry = time.Second

// Quota is a [quota.Quota] kept by Envoy's rate-limit service, asked over
// gRPC (RLS v3 ShouldRateLimit) with the domain and the descriptor from the
// config. The service counts hits in fixed windows of its configured unit
// (second, minute, hour, day), aligned on the clock.
//
// How a batch uses it. The service answers each descriptor of a request all
// or nothing, and adds the hits to the window's counter even when it refuses
// them, so a single ask for more than is left would be refused and spend the
// window's remainder for everyone. Take therefore asks for a batch in chunks,
// in one round trip: the request repeats the descriptor once per chunk (at
// most [MaxChunks] times) with hits_addend = the chunk's size. The service
// adds the chunks to the counter in order, so the chunks it grants are a
// prefix, and Take grants their sum: all of the batch, or what was left of
// the window, to within one chunk. A batch of up to MaxChunks permits is
// granted to the permit. The chunks the service refuses are counted too, but
// only once the window is spent.
//
// Take also asks for no more than the limit per window (requests_per_unit)
// or than the last answer said was left of the current window
// (limit_remaining), both learnt from earlier answers for the same key; and
// once a window is spent it grants nothing until the window ends
// (duration_until_reset), without a round trip. The permits of a window
// lapse at its end: Quota is a [quota.Windowed], and WindowEnd says when.
//
// A descriptor that matches no limit in the service's configuration is
// granted in full. Quota is safe for concurrent use. Create it with
// [New] and Close it when done.
type Quota struct {
	cfg    Config
	conn   *grpc.ClientConn
	client rlsv3.RateLimitServiceClient

	mu    sync.Mutex
	known map[string]window // what the last answer for a key said
}

// window is what answers said about a key's limit.
type window struct {
	limit     int           // requests_per_unit, the most one window grants; 0 if unknown
	period    time.Duration // the length of a window (the limit's unit); 0 if unknown
	end       time.Time     // when the current window ends
	remaining int           // permits left in it when the answer came
}

// New returns a Quota for cfg, or an error beginning
// "envoyquota:" if cfg is invalid. It connects lazily, on the first Take.
func New(cfg Config) (*Quota, error) {
	if cfg.Addr == "" {
		return nil, errors.New("envoyquota: Addr is required")
	}
	if cfg.Domain == "" {
		return nil, errors.New("envoyquota: Domain is required")
	}
	if len(cfg.Entries) == 0 && cfg.KeyEntry == "" {
		return nil, errors.New("envoyquota: Entries or KeyEntry is required")
	}
	for _, e := range cfg.Entries {
		if e.Key == "" || e.Value == "" {
			return nil, fmt.Errorf("envoyquota: descriptor entry %q=%q: key and value must not be empty", e.Key, e.Value)
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
		return nil, fmt.Errorf("envoyquota: %w", err)
	}
	return &Quota{cfg: cfg, conn: conn, client: rlsv3.NewRateLimitServiceClient(conn), known: make(map[string]window)}, nil
}

// Take asks the service for n permits for key in at most one round trip; see
// [Quota] for how many it asks for and what it grants.
func (e *Quota) Take(ctx context.Context, key string, n int, now time.Time) (quota.Grant, error) {
	if n <= 0 {
		return quota.Grant{}, nil
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
			return quota.Grant{RetryAt: w.end}, nil
		}
		ask = min(ask, w.remaining)
	}

	size := (ask + MaxChunks - 1) / MaxChunks // the smallest chunk that asks in MaxChunks or fewer
	chunks := ask / size
	resp, err := e.client.ShouldRateLimit(ctx, e.request(key, chunks, size))
	if err != nil {
		return quota.Grant{}, wrap(ctx, err, "taking %d for %q", chunks*size, key)
	}
	if code := resp.GetOverallCode(); code != rlsv3.RateLimitResponse_OK && code != rlsv3.RateLimitResponse_OVER_LIMIT {
		return quota.Grant{}, fmt.Errorf("envoyquota: taking %d for %q: overall code %v", chunks*size, key, code)
	}
	g := quota.Grant{Granted: granted(resp.GetStatuses(), size, n)}
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

// granted returns the permits granted by an answer to chunks of size
// permits: the sum of the chunks before the first refused, or n if no chunk
// matched a limit.
func granted(statuses []*rlsv3.RateLimitResponse_DescriptorStatus, size, n int) int {
	ok, limited := 0, false
	for _, s := range statuses {
		if s.GetCode() != rlsv3.RateLimitResponse_OK {
			return ok * size
		}
		ok++
		limited = limited || s.GetCurrentLimit() != nil
	}
	if !limited && ok > 0 {
		return n // no limit: unlimited
	}
	return ok * size
}

// request builds the RLS request for chunks of size permits for key: the
// descriptor once per chunk, with hits_addend = size.
func (e *Quota) request(key string, chunks, size int) *rlsv3.RateLimitRequest {
	entries := make([]*ratelimitv3.RateLimitDescriptor_Entry, 0, len(e.cfg.Entries)+1)
	for _, en := range e.cfg.Entries {
		entries = append(entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: en.Key, Value: en.Value})
	}
	if e.cfg.KeyEntry != "" {
		entries = append(entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: e.cfg.KeyEntry, Value: key})
	}
	ds := make([]*ratelimitv3.RateLimitDescriptor, chunks)
	for i := range ds {
		ds[i] = &ratelimitv3.RateLimitDescriptor{Entries: entries}
	}
	return &rlsv3.RateLimitRequest{Domain: e.cfg.Domain, Descriptors: ds, HitsAddend: uint32(size)}
}

// learn records what resp says about key's limit and current window, and
// returns it. The statuses are for copies of one descriptor (see request).
func (e *Quota) learn(key string, resp *rlsv3.RateLimitResponse, now time.Time) window {
	w := window{remaining: math.MaxInt}
	for _, s := range resp.GetStatuses() {
		lim := s.GetCurrentLimit()
		if lim == nil { // no limit matched: unlimited
			continue
		}
		w.limit = int(min(lim.GetRequestsPerUnit(), math.MaxInt32))
		w.period = unitPeriod(lim.GetUnit())
		if d := s.GetDurationUntilReset(); d != nil {
			// The reference service counts whole seconds of its clock: its
			// window ends d after the start of the current second.
			w.end = now.Truncate(time.Second).Add(d.AsDuration())
			// Its windows are aligned on the Unix epoch: a second that
			// ticked between now and its answer would put the end a
			// second early, inside the window, so it is rounded up to
			// the window's boundary.
			if p := int64(w.period / time.Second); p > 1 && w.end.Unix()%p != 0 {
				w.end = time.Unix((w.end.Unix()/p+1)*p, 0)
			}
		}
		left := int(s.GetLimitRemaining())
		if s.GetCode() == rlsv3.RateLimitResponse_OVER_LIMIT {
			left = 0
		}
		w.remaining = min(w.remaining, left)
	}
	if w.limit == 0 {
		w = window{}
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

// unitPeriod returns the length of a limit's window, as the reference
// service counts it (a month is 30 days, a year 365), or 0 if unknown.
func unitPeriod(u rlsv3.RateLimitResponse_RateLimit_Unit) time.Duration {
	const day = 24 * time.Hour
	switch u {
	case rlsv3.RateLimitResponse_RateLimit_SECOND:
		return time.Second
	case rlsv3.RateLimitResponse_RateLimit_MINUTE:
		return time.Minute
	case rlsv3.RateLimitResponse_RateLimit_HOUR:
		return time.Hour
	case rlsv3.RateLimitResponse_RateLimit_DAY:
		return day
	case rlsv3.RateLimitResponse_RateLimit_WEEK:
		return 7 * day
	case rlsv3.RateLimitResponse_RateLimit_MONTH:
		return 30 * day
	case rlsv3.RateLimitResponse_RateLimit_YEAR:
		return 365 * day
	}
	return 0
}

// WindowEnd returns when the service's window holding now ends for key: the
// end an answer gave for the current window, or the next multiple of the
// limit's unit since the Unix epoch (the reference service aligns its
// windows so). It returns the zero Time before an answer for key said what
// its limit is, or if no limit matched.
func (e *Quota) WindowEnd(key string, now time.Time) time.Time {
	e.mu.Lock()
	w := e.known[key]
	e.mu.Unlock()
	switch {
	case now.Before(w.end):
		return w.end
	case w.period > 0:
		p := int64(w.period / time.Second)
		return time.Unix((now.Unix()/p+1)*p, 0)
	}
	return time.Time{}
}

// Close closes the connection to the service.
func (e *Quota) Close() error { return e.conn.Close() }
