package quotabench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
)

// TestSelectStrict selects the strict and the priority scenarios by name
// and as groups.
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
		{"nginx", []string{"nginx-redis", "nginx-redis-8", "nginx-none"}},
		{"strict-none,nginx-redis", []string{"strict-none", "nginx-redis"}},
		{"priority", []string{"priority-high-alone", "priority-shares", "priority-shares-95", "priority-no-share"}},
		{"priority-no-share,priority-shares", []string{"priority-shares", "priority-no-share"}},
		{"advertised", []string{"advertised-ietf", "advertised-draft", "advertised-x", "advertised-openai", "advertised-anthropic", "advertised-none"}},
		{"advertised-none,strict-none", []string{"strict-none", "advertised-none"}},
		{"crossed", []string{"x-8p-fixed600m-2s-ietf", "x-8p-fixed600m-0s-none"}},
		{"advertised,x-8p-fixed600m-0s-none", []string{"advertised-ietf", "advertised-draft", "advertised-x", "advertised-openai",
			"advertised-anthropic", "advertised-none", "x-8p-fixed600m-0s-none"}},
		{"priority,strict-redis", []string{"strict-redis", "priority-high-alone", "priority-shares", "priority-shares-95", "priority-no-share"}},
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

// TestPriorityArgs checks what the processes of each priority scenario are
// given, with the default settings: the quota, its key and the share; the
// source's flags come from the tierSource.
func TestPriorityArgs(t *testing.T) {
	b := &bench{set: Settings{}.withDefaults(), redis: &services.Redis{Addr: "redis:1"}}
	common := func(key string) []string {
		return []string{"--url=http://api", "--header=X-Quota-Client: high", "--output_prefix=/o/high/", "--max_wait=5s",
			"--quota_backend=redis", "--quota_address=redis:1", "--quota_key=" + key, "--quota_rate=9/s", "--quota_fail=open"}
	}
	both := []string{"high", "low"}
	tests := []struct {
		name  string
		tiers []string
		want  []string
	}{
		{"priority-high-alone", []string{"high"}, append(common("priority-high-alone"), "--quota_high_share=0.9")},
		{"priority-shares", both, append(common("priority-shares"), "--quota_high_share=0.9")},
		{"priority-shares-95", both, append(common("priority-shares-95"), "--quota_high_share=0.95")},
		{"priority-no-share", both, common("priority-no-share")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := named(tt.name)
			if diff := cmp.Diff(tt.tiers, sc.tiers()); diff != "" {
				t.Errorf("tiers (-want +got):\n%s", diff)
			}
			if got := b.set.procs(sc); got != len(tt.tiers) {
				t.Errorf("procs: got %d, want %d", got, len(tt.tiers))
			}
			// The quota's rate for 40 s, and the warm-up.
			if got := b.set.elements(sc); got != 361 {
				t.Errorf("elements: got %d, want 361", got)
			}
			if diff := cmp.Diff(tt.want, b.args(sc, "http://api", "high", "/o/high/")); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTierSourceFlags(t *testing.T) {
	want := []string{"--subscription=low-sub", "--pubsub_emulator=127.0.0.1:1", "--pubsub_project=quotabench",
		"--idle_timeout=15s", "--priority=json:tier"}
	if diff := cmp.Diff(want, tierFlags("low", "127.0.0.1:1")); diff != "" {
		t.Errorf("tierFlags (-want +got):\n%s", diff)
	}
}

func TestTierPayload(t *testing.T) {
	for _, tt := range []struct {
		seq  int
		tier string
		want string
	}{{-1, "high", `{"seq":-1,"tier":"high"}`}, {359, "low", `{"seq":359,"tier":"low"}`}} {
		if got := string(tierPayload(tt.seq, tt.tier)); got != tt.want {
			t.Errorf("tierPayload(%d, %q) = %s, want %s", tt.seq, tt.tier, got, tt.want)
		}
	}
}
