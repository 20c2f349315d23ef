package layout

import (
	"slices"
	"strings"
	"testing"
)

// The clients of the shared quota's backends: Redis's, its rate limiter's,
// and those of Envoy's rate-limit service over gRPC. A program links them
// only by importing a backend's package (transforms/throttle/quota/
// redisquota, envoyquota), never through transforms/throttle.
var backendClients = []string{
	"github.com/redis/go-redis",
	"github.com/go-redis/redis_rate",
	"github.com/envoyproxy/go-control-plane",
	"google.golang.org/grpc",
}

// clientOf returns the module of backendClients that holds the package at
// path, or "".
func clientOf(path string) string {
	for _, mod := range backendClients {
		if path == mod || strings.HasPrefix(path, mod+"/") {
			return mod
		}
	}
	return ""
}

// TestThrottleLinksNoBackend: transforms/throttle/quota, the contract
// between the transform and its quota's backends, links none of their
// clients, and transforms/throttle links none on behalf of a backend. Two
// of those modules reach transforms/throttle otherwise, and are held to
// that: go-redis only through the response cache (WithCache takes a Redis
// address), imported by transforms/throttle/internal/cache alone; gRPC
// only as far as Beam's SDK links it itself (its harness talks to the
// runner over gRPC). A failure names the chain of imports that brings a
// client in, or the client's module.
func TestThrottleLinksNoBackend(t *testing.T) {
	module, pkgs := listModule(t)
	beam := strings.Fields(string(goCmd(t, "list", "-deps", "github.com/apache/beam/sdks/v2/go/pkg/beam")))
	for _, tc := range []struct {
		rel   string
		allow func(importer, client string) bool // whether importer (within the module, or "" for any) may link client
	}{
		{"transforms/throttle/quota", func(string, string) bool { return false }},
		{"transforms/throttle", func(importer, client string) bool {
			switch clientOf(client) {
			case "github.com/redis/go-redis":
				return importer == "" || importer == "transforms/throttle/internal/cache"
			case "google.golang.org/grpc":
				return slices.Contains(beam, client)
			}
			return false
		}},
	} {
		p, ok := pkgs[tc.rel]
		if !ok {
			t.Fatalf("%s is not a package of the module: update this test", tc.rel)
		}
		// The module's packages that rel links, and the clients each
		// imports.
		for _, dep := range append([]string{module + "/" + tc.rel}, p.Deps...) {
			rel, ok := within(module, dep)
			if !ok {
				continue
			}
			for _, imp := range pkgs[rel].Imports {
				if clientOf(imp) != "" && !tc.allow(rel, imp) {
					t.Errorf("%s links %s: %s -> %s", tc.rel, imp, strings.Join(chain(module, pkgs, tc.rel, rel), " -> "), imp)
				}
			}
		}
		// Every package rel links, through other modules too: one line for
		// each client's module.
		seen := map[string]bool{}
		for _, dep := range p.Deps {
			if mod := clientOf(dep); mod != "" && !seen[mod] && !tc.allow("", dep) {
				seen[mod] = true
				t.Errorf("%s links %s (%s, and maybe more of it)", tc.rel, mod, dep)
			}
		}
	}
}
