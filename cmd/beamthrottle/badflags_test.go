package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/beamthrottle/beamthrottle/testserver"
)

// TestEveryBadFlagOneLine runs the binary with one bad value for each flag
// that takes one (values the flag package parses: the checks are the
// pipeline's and the layers' below it). Each run is refused at start: exit
// status 1, one line naming the flag, no Beam stack dump or Go panic, and
// no request to the API.
func TestEveryBadFlagOneLine(t *testing.T) {
	bin := buildBinary(t)
	srv, err := testserver.NewServer(testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	redis := []string{"--quota_backend=redis", "--quota_address=127.0.0.1:1", "--quota_rate=10/s"}
	tests := []struct {
		flag string   // the flag the error must name
		args []string // the bad value, and what it needs to be looked at
	}{
		{"input", []string{"--generate=0", "--input=/nonexistent/dir/*.jsonl"}},
		{"input_format", []string{"--input_format=xml"}},
		{"generate_rate", []string{"--generate_rate=-1"}},
		{"idle_timeout", []string{"--idle_timeout=-1s"}},
		{"publish_timeout", []string{"--publish_timeout=-1s"}},
		{"caller", []string{"--caller=nope"}},
		{"url", []string{"--url=ftp://example.com/"}},
		{"method", []string{"--method=GET POST"}},
		{"method", []string{"--method=BAD("}},
		{"method", []string{"--method=ÉCRIRE"}},
		{"content_type", []string{"--content_type=text/plain\x01"}},
		{"header", []string{"--header=Bad Name: v"}},
		{"header_env", []string{"--header_env=Bad Name=SOME_VAR"}},
		{"max_response_bytes", []string{"--max_response_bytes=-1"}},
		{"groups", []string{"--groups=0"}},
		{"batch_size", []string{"--batch_size=0"}},
		{"batch_interval", []string{"--batch_interval=-1s"}},
		{"throttle_mode", []string{"--throttle_mode=fast"}},
		{"throttle_scope", []string{"--throttle_scope=process"}},
		{"k", []string{"--throttle_mode=sre", "--k=-1"}},
		{"window", []string{"--window=weekly"}},
		{"reset_interval", []string{"--throttle_mode=sre", "--reset_interval=-1s"}},
		{"window_size", []string{"--throttle_mode=sre", "--window=sliding", "--window_size=-1s"}},
		{"bucket", []string{"--throttle_mode=sre", "--window=sliding", "--bucket=-1s"}},
		{"strategy", []string{"--strategy=maybe"}},
		{"max_attempts", []string{"--strategy=retry", "--max_attempts=0"}},
		{"max_age", []string{"--strategy=retry", "--max_age=-1s"}},
		{"call_timeout", []string{"--call_timeout=-1s"}},
		{"calls_in_flight", []string{"--calls_in_flight=-1"}},
		{"items_per_call", []string{"--items_per_call=-1"}},
		{"bytes_per_call", []string{"--bytes_per_call=-1"}},
		{"cost", []string{"--cost=weight"}},
		{"priority", []string{"--priority=tier"}},
		{"quota_backend", []string{"--quota_backend=memcached"}},
		{"quota_address", []string{"--quota_backend=redis", "--quota_address=nohost", "--quota_rate=10/s"}},
		{"quota_rate", append(redis[:2:2], "--quota_rate=1000000000000/s")},
		{"quota_rate", []string{"--quota_backend=local", "--quota_rate=1000000000000/s"}},
		{"quota_rate", append(redis[:2:2], "--quota_rate=ten a second")},
		{"quota_burst", append(redis, "--quota_burst=-1")},
		{"quota_high_share", []string{"--quota_high_share=0.5"}},
		{"quota_normal_share", []string{"--quota_normal_share=0.5"}},
		{"quota_high_share", append(redis, "--quota_high_share=1.5")},
		{"quota_domain", []string{"--quota_backend=envoy", "--quota_address=127.0.0.1:1"}},
		{"quota_descriptors", []string{"--quota_backend=envoy", "--quota_address=127.0.0.1:1", "--quota_domain=d", "--quota_descriptors=api"}},
		{"quota_fail", append(redis, "--quota_fail=maybe")},
		{"quota_timeout", append(redis, "--quota_timeout=-1s")},
		{"cache", []string{"--cache=lru"}},
		{"cache_address", []string{"--cache=redis"}},
		{"cache_ttl", []string{"--cache=memory", "--cache_ttl=-1s"}},
		{"cache_key", []string{"--cache=memory", "--cache_key=id"}},
		{"max_buffered", []string{"--max_buffered=-1"}},
		{"max_payload_bytes", []string{"--max_payload_bytes=-1"}},
		{"max_total_attempts", []string{"--max_total_attempts=0"}},
		{"subscription", []string{"--reprocess"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"--generate=5", "--url=" + srv.Endpoint(), "--output_prefix=" + t.TempDir() + "/"}, tc.args...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitError {
				t.Fatalf("got %v, want exit status %d\n%s", err, exitError, tail(out))
			}
			text := strings.TrimSpace(string(out))
			if strings.Contains(text, "\n") || !strings.HasPrefix(text, "beamthrottle: --"+tc.flag+": ") {
				t.Errorf("output\n%s\nwant one line beginning %q", tail(out), "beamthrottle: --"+tc.flag+": ")
			}
			if strings.Contains(text, "goroutine ") || strings.Contains(text, "panic") {
				t.Errorf("output holds a stack dump:\n%s", tail(out))
			}
			if st := srv.Handler.Stats(); st.Accepted+st.Rejected+st.Errors+st.TooLarge != 0 {
				t.Errorf("the API saw requests: %+v, want none", st)
			}
		})
	}
}
