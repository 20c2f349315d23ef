package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*JSONCacheKey)(nil)).Elem())
}

// cacheOptions turns --cache, --cache_address, --cache_ttl and --cache_key
// into the transform's options (none without a cache); the error names the
// flag at fault.
func (o Options) cacheOptions() ([]throttle.Option, error) {
	var errs []error
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	on := true
	switch o.Cache {
	case "", "none":
		on = false
	case "memory":
		if o.CacheAddr != "" {
			bad("cache_address", "the memory cache is in process; set --cache=redis to use %s", o.CacheAddr)
		}
	case "redis":
		if o.CacheAddr == "" {
			bad("cache_address", "--cache=redis needs the host:port of Redis or Memorystore")
		}
	default:
		bad("cache", "want none, memory or redis, got %q", o.Cache)
	}
	if o.CacheTTL < 0 {
		bad("cache_ttl", "must be >= 0 (0: kept until evicted), got %v", o.CacheTTL)
	}
	field, isJSON := strings.CutPrefix(o.CacheKey, "json:")
	switch {
	case o.CacheKey == "":
	case !isJSON || field == "":
		bad("cache_key", "want json:FIELD (or nothing, for the payload's hash), got %q", o.CacheKey)
	case !on:
		bad("cache_key", "is set but there is no cache: set --cache")
	}
	if err := errors.Join(errs...); err != nil || !on {
		return nil, err
	}
	opts := []throttle.Option{throttle.WithCache(o.CacheAddr, o.CacheTTL)}
	if field != "" {
		opts = append(opts, throttle.WithCacheKey(JSONCacheKey{Field: field}))
	}
	return opts, nil
}

// JSONCacheKey keys the response cache by a top-level field of the
// element's JSON payload, such as the ID an enrichment looks up: elements
// whose field holds the same JSON value share one cached response. A
// payload that is not a JSON object or lacks the field is keyed by its
// whole payload, as without --cache_key.
type JSONCacheKey struct {
	Field string
}

// CacheKey returns the field's JSON value in m's payload, or a hash of the
// payload if it has none.
func (k JSONCacheKey) CacheKey(m Element) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(m.Data, &obj) == nil {
		if raw, ok := obj[k.Field]; ok {
			return "field:" + k.Field + "=" + string(raw)
		}
	}
	sum := sha256.Sum256(m.Data)
	return "payload:" + hex.EncodeToString(sum[:])
}
