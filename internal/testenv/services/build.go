package services

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// rateLimitPackage is the main package of Envoy's rate-limit service, pinned
// by the tool line of tools/ratelimit/go.mod.
const rateLimitPackage = "github.com/envoyproxy/ratelimit/src/service_cmd"

var rateLimitBuild struct {
	once sync.Once
	path string
	took time.Duration // zero when the binary came from the cache
	err  error
}

// RateLimitBinary returns the path of Envoy's rate-limit service binary,
// building it when needed, and how long the build took (zero when the binary
// was already built).
//
// The service is built from the module github.com/envoyproxy/ratelimit at the
// version pinned as a tool in tools/ratelimit/go.mod, a module of its own
// because the service's dependencies clash with Beam's (its gRPC interceptors
// are gone from the otelgrpc version Beam needs). The binary is kept in
// $XDG_CACHE_HOME/beamthrottle (os.UserCacheDir), under a name that hashes
// that go.mod and go.sum, the Go version and the platform, so it is built
// once per machine and version (with CGO_ENABLED=0) and later runs reuse
// it. A file lock keeps test processes running in parallel from building it
// twice. Delete the directory to force a rebuild.
func RateLimitBinary() (path string, took time.Duration, err error) {
	b := &rateLimitBuild
	b.once.Do(func() { b.path, b.took, b.err = buildRateLimit() })
	return b.path, b.took, b.err
}

func buildRateLimit() (string, time.Duration, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", 0, err
	}
	toolDir := filepath.Join(root, "tools", "ratelimit")
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(toolDir, f))
		if err != nil {
			return "", 0, fmt.Errorf("services: reading the rate-limit tool module: %w", err)
		}
		h.Write(b)
	}
	fmt.Fprintf(h, "%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	key := hex.EncodeToString(h.Sum(nil))[:16]

	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "beamthrottle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	bin := filepath.Join(dir, "ratelimit-"+key)
	if _, err := os.Stat(bin); err == nil {
		return bin, 0, nil
	}

	unlock, err := lockFile(filepath.Join(dir, "ratelimit.lock"))
	if err != nil {
		return "", 0, err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil { // built by another process while we waited
		return bin, 0, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", 0, fmt.Errorf("services: the go command is needed to build the rate-limit service: %w", err)
	}
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	start := time.Now()
	cmd := exec.Command(goBin, "build", "-C", toolDir, "-o", tmp, rateLimitPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly -trimpath")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", 0, fmt.Errorf("services: building %s in %s: %v\n%s", rateLimitPackage, toolDir, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", 0, err
	}
	return bin, time.Since(start), nil
}
