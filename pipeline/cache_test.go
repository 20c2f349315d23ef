package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestCacheFlags: wrong combinations of the cache's flags are refused at
// start, naming the flag.
func TestCacheFlags(t *testing.T) {
	tests := []struct {
		name             string
		cache, addr, key string
		ttl              time.Duration
		wantFlag         string // "" for valid
	}{
		{"none", "", "", "", time.Hour, ""},
		{"memory", "memory", "", "", time.Hour, ""},
		{"redis", "redis", "10.0.0.4:6379", "json:id", 0, ""},
		{"unknown backend", "lru", "", "", time.Hour, "--cache:"},
		{"redis without address", "redis", "", "", time.Hour, "--cache_address:"},
		{"memory with address", "memory", "10.0.0.4:6379", "", time.Hour, "--cache_address:"},
		{"negative ttl", "memory", "", "", -time.Second, "--cache_ttl:"},
		{"key not json:", "memory", "", "id", time.Hour, "--cache_key:"},
		{"key without a field", "memory", "", "json:", time.Hour, "--cache_key:"},
		{"key without a cache", "none", "", "json:id", time.Hour, "--cache_key:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t)
			o.Generate, o.CallerOptions.URL = 10, "http://127.0.0.1:1/api"
			o.Cache, o.CacheAddr, o.CacheKey, o.CacheTTL = tc.cache, tc.addr, tc.key, tc.ttl
			err := o.Validate()
			switch {
			case tc.wantFlag == "" && err != nil:
				t.Errorf("got %v, want valid", err)
			case tc.wantFlag != "" && (err == nil || !strings.Contains(err.Error(), tc.wantFlag)):
				t.Errorf("got %v, want an error naming %s", err, tc.wantFlag)
			}
		})
	}
}

// TestCacheRun: 300 input lines holding 30 ids, through the pipeline with
// a response cache in Redis: keyed by the whole payload (30 distinct
// lines) or by the "id" field (lines that differ elsewhere share their id's
// response). The quota server answers one call per key, every line is a
// success with its key's response, and the summary counts the cache's
// answers.
func TestCacheRun(t *testing.T) {
	const n, ids = 300, 30
	for _, tc := range []struct {
		name, key string
		line      func(i int) string
	}{
		{"payload", "", func(i int) string { return fmt.Sprintf(`{"id":%d}`, i%ids) }},
		{"json:id", "json:id", func(i int) string { return fmt.Sprintf(`{"id":%d,"seq":%d}`, i%ids, i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := services.StartRedis(t)
			srv, err := testserver.NewServer(testserver.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			dir := t.TempDir()
			var b strings.Builder
			for i := range n {
				b.WriteString(tc.line(i) + "\n")
			}
			if err := os.WriteFile(filepath.Join(dir, "in.jsonl"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			o := baseOptions(t)
			o.Input, o.CallerOptions.URL = filepath.Join(dir, "in.jsonl"), srv.Endpoint()
			o.Cache, o.CacheAddr, o.CacheTTL, o.CacheKey = "redis", rs.Addr, time.Hour, tc.key
			sum := run(t, o)
			if st := srv.Handler.Stats(); st.Accepted != ids {
				t.Errorf("server answered %d calls, want %d: one per key", st.Accepted, ids)
			}
			if sum.Success != n || sum.CacheHits != n-ids || sum.Total() != n {
				t.Errorf("summary: %d success of which %d from the cache, %d in all; want %d, %d, %d",
					sum.Success, sum.CacheHits, sum.Total(), n, n-ids, n)
			}
			lines := readLines(t, o.OutputPrefix, OutSuccess)
			if len(lines) != n {
				t.Fatalf("%d success lines, want %d", len(lines), n)
			}
			for _, l := range lines {
				var in, resp struct{ ID int }
				if err := json.Unmarshal([]byte(l["input"].(string)), &in); err != nil {
					t.Fatal(err)
				}
				raw, _ := json.Marshal(l["response"])
				if err := json.Unmarshal(raw, &resp); err != nil || resp.ID != in.ID {
					t.Errorf("input %s answered %s, want its id's response", l["input"], raw)
				}
			}
		})
	}
}

// TestCacheServiceHangs: --cache_address names a server that accepts
// connections and never answers (a frozen Redis). Every element succeeds,
// and the cache is asked a few times: once, then once per back-off of its
// breaker (1, 2, 4, 8 s...), not once or twice per element. Each round trip
// holds one firing for at most its 100 ms bound, so a few of them cost the
// run a fraction of a second: the job keeps its pace without the cache
// (one round trip per element, as before, cost 200 ms each, a few elements
// a second). The Redis client opens a connection per round trip to a
// server that does not answer, so the server's count of connections
// counts them.
func TestCacheServiceHangs(t *testing.T) {
	const n = 100
	srv, err := testserver.NewServer(testserver.Config{Quota: 100000, Period: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hung := services.StartSilent(t)
	o := baseOptions(t)
	o.Generate = n
	o.CallerOptions.URL = srv.Endpoint()
	o.Cache, o.CacheAddr, o.CacheTTL = "redis", hung.Addr, time.Hour
	sum := run(t, o)
	if sum.Success != n || sum.Total() != n {
		t.Errorf("summary %+v, want all %d elements successes", sum, n)
	}
	if got := hung.Accepted(); got < 1 || got > n/10 {
		t.Errorf("the hung cache was asked %d times, want a few (1 to %d), one per back-off", got, n/10)
	}
	t.Logf("summary %+v; the hung cache was asked %d times", sum, hung.Accepted())
}
