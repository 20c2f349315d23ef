package services

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// RateLimit is Envoy's rate-limit service started by [StartRateLimit] for
// one test.
type RateLimit struct {
	// Addr is the host:port of its gRPC server (RLS v3 ShouldRateLimit). It
	// stays the same across Kill and Restart.
	Addr string
	// HTTPAddr is the host:port of its HTTP server (/healthcheck, /json).
	HTTPAddr string

	p *process
}

// RateLimitConfig returns the directory of the rate-limit service's
// configuration kept in the repository, testdata/ratelimit/config, for
// [StartRateLimit].
func RateLimitConfig(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "testdata", "ratelimit", "config")
}

// StartRateLimit starts Envoy's rate-limit service on free loopback ports,
// storing its counters in the Redis at redisAddr and loading its limits from
// the *.yaml files of configDir (see [RateLimitConfig]), waits until it is
// healthy and stops it when t ends. The binary is built from its Go module on
// first use (see [RateLimitBinary]).
//
// The service is configured by environment variables, as in its README:
// REDIS_URL, REDIS_SOCKET_TYPE=tcp, USE_STATSD=false, GRPC_PORT, PORT,
// DEBUG_PORT, and RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY
// pointing at a copy of configDir in a temporary directory, not watched for
// changes (RUNTIME_WATCH_ROOT=false).
func StartRateLimit(t testing.TB, redisAddr, configDir string) *RateLimit {
	t.Helper()
	r, took, err := tryStartRateLimit(redisAddr, configDir, t.TempDir())
	if took > 0 {
		t.Logf("built Envoy's rate-limit service in %v", took.Round(time.Millisecond))
	}
	if err != nil {
		t.Fatal(err)
	}
	r.p.cleanup(t)
	return r
}

// TryStartRateLimit is StartRateLimit for programs that are not tests, such
// as benchmarks: it keeps its files in dir, returns an error instead of
// failing a test, and leaves the service running until Kill, which the
// caller must call when done.
func TryStartRateLimit(redisAddr, configDir, dir string) (*RateLimit, error) {
	r, _, err := tryStartRateLimit(redisAddr, configDir, dir)
	return r, err
}

// tryStartRateLimit starts the service, and says how long building it took.
func tryStartRateLimit(redisAddr, configDir, dir string) (*RateLimit, time.Duration, error) {
	bin, took, err := RateLimitBinary()
	if err != nil {
		return nil, took, err
	}
	runtimeRoot := filepath.Join(dir, "runtime")
	if err := copyYAML(configDir, filepath.Join(runtimeRoot, "ratelimit", "config")); err != nil {
		return nil, took, err
	}
	var last error
	for attempt := range 3 { // a port found free may be taken before the service binds it
		ports, err := freePorts(3)
		if err != nil {
			return nil, took, err
		}
		grpcPort, httpPort, debugPort := strconv.Itoa(ports[0]), strconv.Itoa(ports[1]), strconv.Itoa(ports[2])
		r := &RateLimit{
			Addr:     net.JoinHostPort("127.0.0.1", grpcPort),
			HTTPAddr: net.JoinHostPort("127.0.0.1", httpPort),
			p: &process{
				name: "ratelimit",
				path: bin,
				env: []string{
					"USE_STATSD=false",
					"LOG_LEVEL=warn",
					"REDIS_SOCKET_TYPE=tcp",
					"REDIS_TYPE=SINGLE",
					"REDIS_URL=" + redisAddr,
					"RUNTIME_ROOT=" + runtimeRoot,
					"RUNTIME_SUBDIRECTORY=ratelimit",
					"RUNTIME_APPDIRECTORY=config",
					"RUNTIME_WATCH_ROOT=false",
					"RUNTIME_IGNOREDOTFILES=true",
					"HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED=true",
					"HOST=127.0.0.1", "PORT=" + httpPort,
					"GRPC_HOST=127.0.0.1", "GRPC_PORT=" + grpcPort,
					"DEBUG_HOST=127.0.0.1", "DEBUG_PORT=" + debugPort,
				},
				log: filepath.Join(dir, fmt.Sprintf("ratelimit-%d.log", attempt)),
			},
		}
		if last = r.start(); last == nil {
			return r, took, nil
		}
	}
	return nil, took, last
}

func (r *RateLimit) start() error {
	if err := r.p.start(); err != nil {
		return err
	}
	if err := r.p.waitReady(r.ready); err != nil {
		r.p.stop()
		return err
	}
	return nil
}

// ready checks that the HTTP health check passes (it does once a
// configuration is loaded) and the gRPC port accepts connections.
func (r *RateLimit) ready() error {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + r.HTTPAddr + "/healthcheck")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s", resp.Status)
	}
	conn, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return err
	}
	return conn.Close()
}

// Kill stops the service at once (SIGKILL). Its counters live in Redis and
// survive. Clients see refused connections until Restart.
func (r *RateLimit) Kill() { r.p.stop() }

// Restart starts the service again on the same addresses and waits until it
// is healthy. It kills the service first if it is running.
func (r *RateLimit) Restart(t testing.TB) {
	t.Helper()
	if err := r.TryRestart(); err != nil {
		t.Fatal(err)
	}
}

// TryRestart is Restart returning its error, for programs that are not
// tests.
func (r *RateLimit) TryRestart() error {
	r.p.stop()
	return r.start()
}

// copyYAML copies the *.yaml files of src into dst, creating dst.
func copyYAML(src, dst string) error {
	files, err := filepath.Glob(filepath.Join(src, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("services: no *.yaml rate-limit configuration in %s", src)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
