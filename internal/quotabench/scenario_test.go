package quotabench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/services"
)

// TestSelectStrict selects the strict scenarios by name and as a group.
func TestSelectStrict(t *testing.T) {
	names := func(scs []Scenario) []string {
		var out []string
		for _, s := range scs {
			out = append(out, s.Name)
		}
		return out
	}
	strict := []string{"strict-none", "strict-redis", "strict-redis-95", "strict-redis-100", "strict-local", "strict-local-one", "strict-envoy"}
	tests := []struct {
		names string
		want  []string
	}{
		{"strict", strict},
		{"strict-local-one, strict-redis", []string{"strict-redis", "strict-local-one"}},
		{"redis,strict,strict-none", append([]string{"redis"}, strict...)},
	}
	for _, tt := range tests {
		t.Run(tt.names, func(t *testing.T) {
			got, err := Select(tt.names)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("Select(%q) (-want +got):\n%s", tt.names, diff)
			}
		})
	}
	if _, err := Select("strict,strict-nothing"); err == nil {
		t.Errorf("Select of an unknown name: no error, want one")
	}
}

func TestRateFlag(t *testing.T) {
	for perSecond, want := range map[float64]string{
		9: "9/s", 3: "3/s", 10: "10/s", 9.5: "570/m", 0.5: "30/m",
		9.5 / 3: "190/m", 1.0 / 7: "514/h", 0.0001: "1/h",
	} {
		if got := rateFlag(perSecond); got != want {
			t.Errorf("rateFlag(%v) = %q, want %q", perSecond, got, want)
		}
	}
}

// TestStrictArgs checks what the processes of each strict scenario are
// given, with the default settings: the elements, the quota and its share.
func TestStrictArgs(t *testing.T) {
	b := &bench{set: Settings{}.withDefaults(), redis: &services.Redis{Addr: "redis:1"}, rl: &services.RateLimit{Addr: "rl:2"}}
	common := func(n string) []string {
		return []string{"--generate=" + n, "--url=http://api", "--header=X-Quota-Client: p1", "--output_prefix=/o/p1/", "--max_wait=auto"}
	}
	tests := []struct {
		name      string
		procs     int
		quotaRate float64
		want      []string
	}{
		{"strict-none", 3, 10, append(common("200"), "--quota_backend=none")},
		{"strict-redis", 3, 9, append(common("200"), "--quota_backend=redis",
			"--quota_address=redis:1", "--quota_key=strict-redis", "--quota_rate=9/s", "--quota_fail=open")},
		{"strict-redis-95", 3, 9.5, append(common("200"), "--quota_backend=redis",
			"--quota_address=redis:1", "--quota_key=strict-redis-95", "--quota_rate=570/m", "--quota_fail=open")},
		{"strict-redis-100", 3, 10, append(common("200"), "--quota_backend=redis",
			"--quota_address=redis:1", "--quota_key=strict-redis-100", "--quota_rate=10/s", "--quota_fail=open")},
		{"strict-local", 3, 9, append(common("200"), "--quota_backend=local", "--quota_rate=3/s")},
		{"strict-local-one", 1, 9, append(common("600"), "--quota_backend=local", "--quota_rate=9/s")},
		{"strict-envoy", 3, 9, append(common("200"), "--quota_backend=envoy", "--quota_address=rl:2",
			"--quota_key=strict-envoy", "--quota_domain=beamthrottle", "--quota_descriptors=bench=strict", "--quota_fail=open")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := named(tt.name)
			if got := b.set.procs(sc); got != tt.procs {
				t.Errorf("procs: got %d, want %d", got, tt.procs)
			}
			if got := b.set.quotaRate(sc); got != tt.quotaRate {
				t.Errorf("quotaRate: got %v, want %v", got, tt.quotaRate)
			}
			if diff := cmp.Diff(tt.want, b.args(sc, "http://api", "p1", "/o/p1/")); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBucketArgs checks that the token-bucket scenarios still offer their
// rate for their duration, with the bounded wait.
func TestBucketArgs(t *testing.T) {
	b := &bench{set: Settings{}.withDefaults(), redis: &services.Redis{Addr: "redis:1"}}
	want := []string{"--generate=1200", "--generate_rate=30", "--url=http://api", "--header=X-Quota-Client: p1",
		"--output_prefix=/o/p1/", "--max_wait=5s", "--quota_backend=redis", "--quota_address=redis:1", "--quota_key=bench",
		"--quota_rate=60/s", "--quota_fail=open"}
	if diff := cmp.Diff(want, b.args(named("redis"), "http://api", "p1", "/o/p1/")); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}
