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

// TestNginxLimits: nginx admits one request a second at rate 1 with no
// burst, refuses the others with 429, and logs each with the client's
// name.
func TestNginxLimits(t *testing.T) {
	n := StartNginx(t, 1)
	var got []int
	for range 3 {
		req, err := http.NewRequest(http.MethodPost, n.URL, strings.NewReader(`{"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Quota-Client", "w1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got = append(got, resp.StatusCode)
	}
	// The three came within a second, unless the machine stalled for one:
	// the first is admitted, and at most one more.
	if got[0] != http.StatusOK || got[1] == http.StatusOK && got[2] == http.StatusOK {
		t.Errorf("statuses %v, want 200 then 429s", got)
	}
	var log []NginxRequest
	deadline := time.Now().Add(10 * time.Second)
	for len(log) < 3 && time.Now().Before(deadline) { // nginx writes its log line after the answer
		var err error
		if log, err = n.Log(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(log) != 3 {
		t.Fatalf("logged %d requests, want 3", len(log))
	}
	// Two workers write the log: a line may come before the line of the
	// request before it. The statuses logged are those answered.
	logged := map[int]int{}
	for i, r := range log {
		if r.Client != "w1" || r.At.IsZero() {
			t.Errorf("log[%d] = %+v, want client w1 and a time", i, r)
		}
		logged[r.Status]++
	}
	for _, s := range got {
		logged[s]--
	}
	for s, n := range logged {
		if n != 0 {
			t.Errorf("status %d logged %+d times more than answered", s, n)
		}
	}
}

func TestParseNginxLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want NginxRequest
		ok   bool
	}{
		{`1795817939.171 429 "w1"`, NginxRequest{At: time.UnixMilli(1795817939171), Client: "w1", Status: 429}, true},
		{`1795817939.005 200 "-"`, NginxRequest{At: time.UnixMilli(1795817939005), Status: 200}, true},
		{`1795817939.17 200 "w"`, NginxRequest{}, false},
		{`1795817939.171 x "w"`, NginxRequest{}, false},
		{`garbage`, NginxRequest{}, false},
	} {
		got, err := parseNginxLine(tc.line)
		if (err == nil) != tc.ok || tc.ok && (!got.At.Equal(tc.want.At) || got.Client != tc.want.Client || got.Status != tc.want.Status) {
			t.Errorf("parseNginxLine(%q) = %+v, %v; want %+v, ok %v", tc.line, got, err, tc.want, tc.ok)
		}
	}
}
