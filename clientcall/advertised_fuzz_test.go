package clientcall_test

import (
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/google/go-cmp/cmp"
)

// FuzzParseAdvertised: whatever header an answer carries (given as
// "Name: value" lines), ParseAdvertised never panics and is deterministic; it
// returns nil or a non-empty list whose every observation advertises
// something, with Limit and Remaining at least -1 (unknown), a non-negative
// Window, a Unit, and a Reset that is unknown or not before the answer's
// time minus a second.
func FuzzParseAdvertised(f *testing.F) {
	for _, block := range []string{
		"RateLimit-Policy: \"hour\";q=1000;w=3600, \"day\";q=5000;w=86400\nRateLimit: \"day\";r=100;t=36000",
		"RateLimit-Policy: \"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:sdfjLJUOUH==:",
		"RateLimit-Policy: quota;q=100;w=1\nRateLimit: quota;t=1",
		"RateLimit-Policy: 5;w=60\nRateLimit: limit=5, remaining=4, reset=60",
		"RateLimit-Policy: 5;w=60\nRateLimit-Limit: 5\nRateLimit-Remaining: 4\nRateLimit-Reset: 60",
		"X-RateLimit-Limit: 1, 1;w=60;name=\"first\", 4;w=3600;name=\"second\"\nX-RateLimit-Remaining: 2\nX-RateLimit-Reset: 3",
		"Date: Mon, 01 Jul 2013 17:27:06 GMT\nX-RateLimit-Limit: 5000\nX-RateLimit-Remaining: 4966\nX-RateLimit-Used: 34\nX-RateLimit-Reset: 1372700873\nX-RateLimit-Resource: core",
		"x-rate-limit-limit: 900\nx-rate-limit-remaining: 847\nx-rate-limit-reset: 1705420800000",
		"X-RateLimit-Limit: 10\nX-RateLimit-Remaining: 0\nX-RateLimit-Reset: 1470173023.123\nX-RateLimit-Reset-After: 64.57\nX-RateLimit-Bucket: abcd1234",
		"x-ratelimit-limit-requests: 60\nx-ratelimit-remaining-requests: 59\nx-ratelimit-reset-requests: 1s\nx-ratelimit-reset-tokens: 2m59.56s",
		"Date: Thu, 21 Aug 2025 12:41:00 GMT\nanthropic-ratelimit-tokens-limit: 96000\nanthropic-ratelimit-tokens-remaining: 96000\nanthropic-ratelimit-tokens-reset: 2025-08-21T12:40:59Z",
		"RateLimit-Policy: \"permin\";q=50;w=60,\nRateLimit: \"permin;r=12",
		"X-RateLimit-Reset: 99999999999999999999\nX-RateLimit-Reset-After: 9223372036.999999999\nx-ratelimit-reset-tokens: 2562047h47m16.854775807s",
	} {
		f.Add(block, int64(1761031680))
	}
	f.Fuzz(func(t *testing.T, block string, unix int64) {
		h := header(strings.Split(block, "\n")...)
		now := time.Unix(unix%(1<<40), 0) // some 35,000 years either side of 1970
		got := clientcall.ParseAdvertised(h, now)
		if got != nil && len(got) == 0 {
			t.Errorf("ParseAdvertised = %#v, want nil when nothing is advertised", got)
		}
		for _, a := range got {
			if a.Limit < -1 || a.Remaining < -1 || a.Window < 0 || a.Unit == "" {
				t.Errorf("ParseAdvertised: got %+v, want Limit and Remaining >= -1, Window >= 0, a Unit", a)
			}
			if a.Limit < 0 && a.Remaining < 0 && a.Reset.IsZero() && a.Window == 0 {
				t.Errorf("ParseAdvertised: got %+v, want an observation that advertises something", a)
			}
			if !a.Reset.IsZero() && a.Reset.Before(now.Add(-time.Second)) {
				t.Errorf("ParseAdvertised: got Reset %v, want at or after %v", a.Reset, now.Add(-time.Second))
			}
		}
		if again := clientcall.ParseAdvertised(h, now); !cmp.Equal(got, again) {
			t.Errorf("ParseAdvertised twice: got %+v then %+v, want the same", got, again)
		}
	})
}
