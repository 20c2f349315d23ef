package throttle

// The tests of the shared quota run the real backends: Redis and Envoy's
// rate-limit service on loopback (internal/testenv/services), registered by their
// packages, as a user's program registers them.
import (
	_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/envoyquota"
	_ "github.com/beamthrottle/beamthrottle/transforms/throttle/quota/redisquota"
)

// The names of the backends the tests use.
const (
	quotaLocal = "local"
	quotaRedis = "redis"
	quotaEnvoy = "envoy"
)
