package services

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ping sends PING to the Redis at addr and returns its answer.
func ping(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// TestRedisKillRestart starts redis-server, kills it, and restarts it on the
// same address.
func TestRedisKillRestart(t *testing.T) {
	r := StartRedis(t)
	if got, err := ping(r.Addr); got != "+PONG" || err != nil {
		t.Fatalf("PING after start = %q, %v; want +PONG", got, err)
	}
	r.Kill()
	if got, err := ping(r.Addr); err == nil {
		t.Fatalf("PING after Kill = %q, want an error", got)
	}
	r.Restart(t)
	if got, err := ping(r.Addr); got != "+PONG" || err != nil {
		t.Fatalf("PING after Restart = %q, %v; want +PONG", got, err)
	}
}

// askJSON asks the rate-limit service for one hit on test_day=value over its
// HTTP /json endpoint and returns the answer's body.
func askJSON(t *testing.T, rl *RateLimit, value string) string {
	t.Helper()
	body := `{"domain":"beamthrottle","descriptors":[{"entries":[{"key":"test_day","value":"` + value + `"}]}]}`
	resp, err := http.Post("http://"+rl.HTTPAddr+"/json", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRateLimitKillRestart starts the rate-limit service over a Redis, asks
// it for a permit, and kills and restarts it on the same address.
func TestRateLimitKillRestart(t *testing.T) {
	r := StartRedis(t)
	rl := StartRateLimit(t, r.Addr, RateLimitConfig(t))
	if got := askJSON(t, rl, "services"); !strings.Contains(got, `"overallCode":"OK"`) {
		t.Fatalf("first request answered %s, want overallCode OK", got)
	}
	rl.Kill()
	if err := rl.ready(); err == nil {
		t.Fatalf("ready after Kill, want an error")
	}
	rl.Restart(t)
	if got := askJSON(t, rl, "services"); !strings.Contains(got, `"limitRemaining":8`) {
		t.Fatalf("request after Restart answered %s, want limitRemaining 8 (the counter lives in Redis)", got)
	}
}

// TestRepoRoot finds the repository's root from this package's directory.
func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if want := root + "/testdata/ratelimit/config"; RateLimitConfig(t) != want {
		t.Errorf("RateLimitConfig = %q, want %q", RateLimitConfig(t), want)
	}
}

// TestTryStart starts both servers as a program that is not a test does,
// restarts them, and stops them with Kill.
func TestTryStart(t *testing.T) {
	r, err := TryStartRedis(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Kill)
	rl, err := TryStartRateLimit(r.Addr, RateLimitConfig(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rl.Kill)
	if got := askJSON(t, rl, "try"); !strings.Contains(got, `"overallCode":"OK"`) {
		t.Fatalf("first request answered %s, want overallCode OK", got)
	}
	r.Kill()
	if err := r.TryRestart(); err != nil {
		t.Fatalf("Redis.TryRestart: %v", err)
	}
	if got, err := ping(r.Addr); got != "+PONG" || err != nil {
		t.Fatalf("PING after TryRestart = %q, %v; want +PONG", got, err)
	}
	rl.Kill()
	if err := rl.TryRestart(); err != nil {
		t.Fatalf("RateLimit.TryRestart: %v", err)
	}
	if err := rl.ready(); err != nil {
		t.Fatalf("ready after TryRestart: %v", err)
	}
}
