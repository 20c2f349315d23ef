package clientcall_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/google/go-cmp/cmp"
)

// header builds an answer's header from "Name: value" lines, as net/http
// would receive them (names canonicalised, repeated names kept in order).
func header(lines ...string) http.Header {
	h := http.Header{}
	for _, l := range lines {
		name, value, _ := strings.Cut(l, ":")
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return h
}

func TestParseAdvertised(t *testing.T) {
	now := time.Date(2025, 10, 21, 7, 28, 0, 0, time.UTC)
	const (
		s = time.Second
		m = time.Minute
	)
	// Samples with an epoch reset set now from their Date header.
	github := time.Date(2013, 7, 1, 17, 27, 6, 0, time.UTC)      // Date: Mon, 01 Jul 2013 17:27:06 GMT
	githubOut := time.Date(2013, 8, 20, 14, 50, 41, 0, time.UTC) // Date: Tue, 20 Aug 2013 14:50:41 GMT
	gitlab := time.Date(2021, 1, 5, 10, 59, 30, 0, time.UTC)     // 30 s before its RateLimit-ResetTime
	anthropic := time.Date(2025, 8, 21, 12, 41, 0, 0, time.UTC)  // Date: Thu, 21 Aug 2025 12:41:00 GMT
	discord := time.Unix(1470173000, 0).UTC()                    // 23.123 s before its X-RateLimit-Reset
	xReset := time.Unix(1705420800, 0)                           // X's sample x-rate-limit-reset
	dateOf := func(t time.Time) string { return "Date: " + t.Format(http.TimeFormat) }

	tests := []struct {
		name string
		h    http.Header
		now  time.Time // zero: now
		want []clientcall.Advertised
	}{
		// IETF draft-ietf-httpapi-ratelimit-headers-09 (and -11, unchanged):
		// https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/
		{
			name: "IETF two policies, one service limit (draft-09 B.3.2)",
			h: header(`RateLimit-Policy: "hour";q=1000;w=3600, "day";q=5000;w=86400`,
				`RateLimit: "day";r=100;t=36000`),
			want: []clientcall.Advertised{
				{Name: "hour", Unit: "requests", Limit: 1000, Remaining: -1, Window: time.Hour},
				{Name: "day", Unit: "requests", Limit: 5000, Remaining: 100, Reset: now.Add(10 * time.Hour), Window: 24 * time.Hour},
			},
		},
		{
			name: "IETF policy joined with its limit (draft-09 B.2.1)",
			h: header(`RateLimit: "fixedwindow";r=99;t=50`,
				`RateLimit-Policy: "fixedwindow";q=100;w=60`),
			want: []clientcall.Advertised{
				{Name: "fixedwindow", Unit: "requests", Limit: 100, Remaining: 99, Reset: now.Add(50 * s), Window: m},
			},
		},
		{
			name: "IETF policy with unit and partition key, no RateLimit (draft-09 3.2)",
			h:    header(`RateLimit-Policy: "peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:`),
			want: []clientcall.Advertised{
				{Name: "peruser", Unit: "content-bytes", Limit: 65535, Remaining: -1, Window: 10 * s},
			},
		},
		{
			name: "IETF RateLimit without policy (draft-09 B.1.1)",
			h:    header(`RateLimit: "default";r=0;t=50`),
			want: []clientcall.Advertised{
				{Name: "default", Unit: "requests", Limit: -1, Remaining: 0, Reset: now.Add(50 * s)},
			},
		},
		{
			name: "IETF token names, reset without remaining (draft-09 B.3.1)",
			h:    header(`RateLimit-Policy: quota;q=100;w=1`, `RateLimit: quota;t=1`),
			want: []clientcall.Advertised{
				{Name: "quota", Unit: "requests", Limit: 100, Remaining: -1, Reset: now.Add(s), Window: s},
			},
		},
		{
			name: "IETF policies split over two field lines (draft-09 3)",
			h:    header(`RateLimit-Policy: "burst";q=100;w=60`, `RateLimit-Policy: "daily";q=1000;w=86400`),
			want: []clientcall.Advertised{
				{Name: "burst", Unit: "requests", Limit: 100, Remaining: -1, Window: m},
				{Name: "daily", Unit: "requests", Limit: 1000, Remaining: -1, Window: 24 * time.Hour},
			},
		},
		{
			// express-rate-limit standardHeaders: 'draft-8', two limiters
			// (test/library/headers-test.ts).
			name: "express-rate-limit draft-8, two policies",
			h: header(`RateLimit-Policy: "1-in-5sec"; q=1; w=5; pk=:MmMyNmI0NmI2OGZm:, "5-in-1min"; q=5; w=60; pk=:MmMyNmI0NmI2OGZm:`,
				`RateLimit: "1-in-5sec"; r=0; t=5, "5-in-1min"; r=4; t=60`),
			want: []clientcall.Advertised{
				{Name: "1-in-5sec", Unit: "requests", Limit: 1, Remaining: 0, Reset: now.Add(5 * s), Window: 5 * s},
				{Name: "5-in-1min", Unit: "requests", Limit: 5, Remaining: 4, Reset: now.Add(m), Window: m},
			},
		},

		// Older drafts.
		{
			// express-rate-limit standardHeaders: 'draft-7' (test/library/headers-test.ts).
			name: "express-rate-limit draft-7 dictionary",
			h:    header(`RateLimit-Policy: 5;w=60`, `RateLimit: limit=5, remaining=4, reset=60`),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 5, Remaining: 4, Reset: now.Add(m), Window: m},
			},
		},
		{
			// express-rate-limit standardHeaders: 'draft-6' (test/library/headers-test.ts).
			name: "express-rate-limit draft-6",
			h: header(`RateLimit-Policy: 5;w=60`, `RateLimit-Limit: 5`,
				`RateLimit-Remaining: 4`, `RateLimit-Reset: 60`),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 5, Remaining: 4, Reset: now.Add(m), Window: m},
			},
		},
		{
			// Kong's rate-limiting handler sets RateLimit-Limit, -Remaining and
			// -Reset (seconds) beside its per-window X-RateLimit-*-Minute
			// fields, which are not read; the values are illustrative.
			name: "Kong",
			h: header(`RateLimit-Limit: 6`, `RateLimit-Remaining: 4`, `RateLimit-Reset: 47`,
				`X-RateLimit-Limit-Minute: 10`, `X-RateLimit-Remaining-Minute: 9`),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 6, Remaining: 4, Reset: now.Add(47 * s)},
			},
		},
		{
			// GitLab's user and IP rate limits (user_and_ip_rate_limits.md) send
			// RateLimit-Reset as epoch seconds, with RateLimit-ResetTime.
			name: "GitLab epoch RateLimit-Reset",
			h: header(dateOf(gitlab), `RateLimit-Limit: 60`, `RateLimit-Remaining: 0`,
				`RateLimit-Reset: 1609844400`, `RateLimit-ResetTime: Tue, 05 Jan 2021 11:00:00 GMT`),
			now: gitlab,
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 60, Remaining: 0, Reset: gitlab.Add(30 * s)},
			},
		},

		// Envoy, enable_x_ratelimit_headers: DRAFT_VERSION_03: the expected
		// headers of Envoy's ratelimit_headers_test.cc.
		{
			name: "Envoy two descriptors",
			h: header(`X-RateLimit-Limit: 1, 1;w=60;name="first", 4;w=3600;name="second"`,
				`X-RateLimit-Remaining: 2`, `X-RateLimit-Reset: 3`),
			want: []clientcall.Advertised{
				{Name: "first", Unit: "requests", Limit: 1, Remaining: 2, Reset: now.Add(3 * s), Window: m},
				{Name: "second", Unit: "requests", Limit: 4, Remaining: -1, Window: time.Hour},
			},
		},
		{
			name: "Envoy descriptor without name",
			h:    header(`X-RateLimit-Limit: 1, 1;w=60`, `X-RateLimit-Remaining: 2`, `X-RateLimit-Reset: 3`),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 1, Remaining: 2, Reset: now.Add(3 * s), Window: m},
			},
		},

		// GitHub REST API (content/rest/overview/resources-in-the-rest-api.md).
		{
			name: "GitHub, clocks in sync",
			h: header(dateOf(github), `x-ratelimit-limit: 5000`, `x-ratelimit-remaining: 4966`,
				`x-ratelimit-used: 34`, `x-ratelimit-reset: 1372700873`, `x-ratelimit-resource: core`),
			now: github,
			want: []clientcall.Advertised{
				{Name: "core", Unit: "requests", Limit: 5000, Remaining: 4966, Reset: time.Unix(1372700873, 0)},
			},
		},
		{
			name: "GitHub, Date 30 s ahead of the local clock",
			h: header(dateOf(github), `x-ratelimit-limit: 5000`, `x-ratelimit-remaining: 4966`,
				`x-ratelimit-reset: 1372700873`, `x-ratelimit-resource: core`),
			now: github.Add(-30 * s),
			want: []clientcall.Advertised{
				{Name: "core", Unit: "requests", Limit: 5000, Remaining: 4966, Reset: time.Unix(1372700873, 0).Add(-30 * s)},
			},
		},
		{
			name: "GitHub, Date 30 s behind the local clock",
			h: header(dateOf(github), `x-ratelimit-limit: 5000`, `x-ratelimit-remaining: 4966`,
				`x-ratelimit-reset: 1372700873`, `x-ratelimit-resource: core`),
			now: github.Add(30 * s),
			want: []clientcall.Advertised{
				{Name: "core", Unit: "requests", Limit: 5000, Remaining: 4966, Reset: time.Unix(1372700873, 0).Add(30 * s)},
			},
		},
		{
			// GitHub's exhausted sample, its x-ratelimit-remaining left out.
			name: "GitHub exhausted, no remaining: derived from used",
			h: header(dateOf(githubOut), `x-ratelimit-limit: 60`, `x-ratelimit-used: 60`,
				`x-ratelimit-reset: 1377013266`),
			now: githubOut,
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 60, Remaining: 0, Reset: time.Unix(1377013266, 0)},
			},
		},
		{
			name: "GitHub, no Date: epoch taken as sent",
			h:    header(`x-ratelimit-limit: 60`, `x-ratelimit-remaining: 0`, `x-ratelimit-reset: 1377013266`),
			now:  time.Unix(1377013266-100, 0),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 60, Remaining: 0, Reset: time.Unix(1377013266, 0)},
			},
		},
		{
			name: "GitHub, unreadable Date: epoch taken as sent",
			h: header(`Date: yesterday`, `x-ratelimit-limit: 60`, `x-ratelimit-remaining: 0`,
				`x-ratelimit-reset: 1377013266`),
			now: time.Unix(1377013266-100, 0),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 60, Remaining: 0, Reset: time.Unix(1377013266, 0)},
			},
		},
		{
			name: "epoch reset already past: now",
			h:    header(dateOf(github), `x-ratelimit-limit: 60`, `x-ratelimit-reset: 1372699000`),
			now:  github,
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 60, Remaining: -1, Reset: github},
			},
		},
		{
			// Some APIs send epoch milliseconds (Diffcord's rate-limit docs);
			// constructed.
			name: "epoch milliseconds",
			h:    header(`X-RateLimit-Remaining: 7`, `X-RateLimit-Reset: 1705420800000`),
			now:  xReset.Add(-m),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: -1, Remaining: 7, Reset: xReset},
			},
		},

		// X API (docs.x.com/fundamentals/rate-limits): X-Rate-Limit-*.
		{
			name: "X",
			h:    header(`x-rate-limit-limit: 900`, `x-rate-limit-remaining: 847`, `x-rate-limit-reset: 1705420800`),
			now:  xReset.Add(-10 * m),
			want: []clientcall.Advertised{
				{Unit: "requests", Limit: 900, Remaining: 847, Reset: xReset},
			},
		},

		// Discord (discord-api-docs, docs/topics/rate-limits.md).
		{
			name: "Discord header example: Reset-After preferred",
			h: header(`X-RateLimit-Limit: 5`, `X-RateLimit-Remaining: 1`, `X-RateLimit-Reset: 1470173023`,
				`X-RateLimit-Reset-After: 1`, `X-RateLimit-Bucket: abcd1234`),
			want: []clientcall.Advertised{
				{Name: "abcd1234", Unit: "requests", Limit: 5, Remaining: 1, Reset: now.Add(s)},
			},
		},
		{
			name: "Discord exceeded user rate limit",
			h: header(`Retry-After: 65`, `X-RateLimit-Limit: 10`, `X-RateLimit-Remaining: 0`,
				`X-RateLimit-Reset: 1470173023.123`, `X-RateLimit-Reset-After: 64.57`,
				`X-RateLimit-Bucket: abcd1234`, `X-RateLimit-Scope: user`),
			want: []clientcall.Advertised{
				{Name: "abcd1234", Unit: "requests", Limit: 10, Remaining: 0, Reset: now.Add(64570 * time.Millisecond)},
			},
		},
		{
			name: "Discord epoch with decimals, Date 30 s behind the local clock",
			h: header(dateOf(discord), `X-RateLimit-Limit: 10`, `X-RateLimit-Remaining: 0`,
				`X-RateLimit-Reset: 1470173023.123`, `X-RateLimit-Bucket: abcd1234`),
			now: discord.Add(30 * s),
			want: []clientcall.Advertised{
				{Name: "abcd1234", Unit: "requests", Limit: 10, Remaining: 0, Reset: discord.Add(53123 * time.Millisecond)},
			},
		},

		// OpenAI's rate-limits guide, "Rate limits in headers" (sample values).
		{
			name: "OpenAI docs sample",
			h: header(`x-ratelimit-limit-requests: 60`, `x-ratelimit-limit-tokens: 150000`,
				`x-ratelimit-remaining-requests: 59`, `x-ratelimit-remaining-tokens: 149984`,
				`x-ratelimit-reset-requests: 1s`, `x-ratelimit-reset-tokens: 6m0s`),
			want: []clientcall.Advertised{
				{Name: "requests", Unit: "requests", Limit: 60, Remaining: 59, Reset: now.Add(s), Refill: true},
				{Name: "tokens", Unit: "tokens", Limit: 150000, Remaining: 149984, Reset: now.Add(6 * m), Refill: true},
			},
		},
		{
			// An answer quoted on the OpenAI community forum ("How to get rate
			// limit reset time for response API?").
			name: "OpenAI milliseconds, usage-based fields not read",
			h: header(`x-ratelimit-limit-requests: 5000`, `x-ratelimit-limit-tokens: 160000`,
				`x-ratelimit-limit-tokens_usage_based: 160000`, `x-ratelimit-remaining-requests: 4999`,
				`x-ratelimit-remaining-tokens: 159976`, `x-ratelimit-remaining-tokens_usage_based: 159976`,
				`x-ratelimit-reset-requests: 12ms`, `x-ratelimit-reset-tokens: 9ms`,
				`x-ratelimit-reset-tokens_usage_based: 9ms`),
			want: []clientcall.Advertised{
				{Name: "requests", Unit: "requests", Limit: 5000, Remaining: 4999, Reset: now.Add(12 * time.Millisecond), Refill: true},
				{Name: "tokens", Unit: "tokens", Limit: 160000, Remaining: 159976, Reset: now.Add(9 * time.Millisecond), Refill: true},
			},
		},
		{
			// Groq sends OpenAI's fields (console.groq.com/docs/rate-limits).
			name: "Groq fractional durations",
			h: header(`x-ratelimit-limit-requests: 14400`, `x-ratelimit-limit-tokens: 18000`,
				`x-ratelimit-remaining-requests: 14370`, `x-ratelimit-remaining-tokens: 17997`,
				`x-ratelimit-reset-requests: 2m59.56s`, `x-ratelimit-reset-tokens: 7.66s`),
			want: []clientcall.Advertised{
				{Name: "requests", Unit: "requests", Limit: 14400, Remaining: 14370, Reset: now.Add(2*m + 59560*time.Millisecond), Refill: true},
				{Name: "tokens", Unit: "tokens", Limit: 18000, Remaining: 17997, Reset: now.Add(7660 * time.Millisecond), Refill: true},
			},
		},
		{
			// Azure OpenAI's Responses API sends -1 for unknown values (Microsoft
			// Q&A, "Azure OpenAI Responses API x-ratelimit headers values -1, 0");
			// the requests fields with bare seconds are illustrative.
			name: "Azure OpenAI unknowns and bare seconds",
			h: header(`x-ratelimit-limit-tokens: -1`, `x-ratelimit-remaining-tokens: -1`,
				`x-ratelimit-reset-tokens: 0`, `x-ratelimit-remaining-requests: 3`, `x-ratelimit-reset-requests: 7`),
			want: []clientcall.Advertised{
				{Name: "requests", Unit: "requests", Limit: -1, Remaining: 3, Reset: now.Add(7 * s), Refill: true},
				{Name: "tokens", Unit: "tokens", Limit: -1, Remaining: -1, Reset: now, Refill: true},
			},
		},

		// Anthropic (docs.anthropic.com/en/api/rate-limits): RFC 3339 resets.
		{
			// A captured answer (tidyllm, tests/testthat/claude/api.anthropic.com/v1/messages-e050b5-POST.R):
			// full buckets, resets a second before Date.
			name: "Anthropic full buckets: resets past are now",
			h: header(`date: Thu, 21 Aug 2025 12:41:00 GMT`,
				`anthropic-ratelimit-input-tokens-limit: 80000`, `anthropic-ratelimit-input-tokens-remaining: 80000`,
				`anthropic-ratelimit-input-tokens-reset: 2025-08-21T12:40:59Z`,
				`anthropic-ratelimit-output-tokens-limit: 16000`, `anthropic-ratelimit-output-tokens-remaining: 16000`,
				`anthropic-ratelimit-output-tokens-reset: 2025-08-21T12:41:00Z`,
				`anthropic-ratelimit-requests-limit: 1000`, `anthropic-ratelimit-requests-remaining: 999`,
				`anthropic-ratelimit-requests-reset: 2025-08-21T12:40:59Z`,
				`anthropic-ratelimit-tokens-limit: 96000`, `anthropic-ratelimit-tokens-remaining: 96000`,
				`anthropic-ratelimit-tokens-reset: 2025-08-21T12:40:59Z`),
			now: anthropic,
			want: []clientcall.Advertised{
				{Name: "requests", Unit: "requests", Limit: 1000, Remaining: 999, Reset: anthropic, Refill: true},
				{Name: "tokens", Unit: "tokens", Limit: 96000, Remaining: 96000, Reset: anthropic, Refill: true},
				{Name: "input-tokens", Unit: "input-tokens", Limit: 80000, Remaining: 80000, Reset: anthropic, Refill: true},
				{Name: "output-tokens", Unit: "output-tokens", Limit: 16000, Remaining: 16000, Reset: anthropic, Refill: true},
			},
		},
		{
			// Constructed in the documented format.
			name: "Anthropic draining, Date 30 s ahead of the local clock",
			h: header(`date: Thu, 21 Aug 2025 12:41:00 GMT`,
				`anthropic-ratelimit-requests-limit: 50`, `anthropic-ratelimit-requests-remaining: 0`,
				`anthropic-ratelimit-requests-reset: 2025-08-21T12:41:20Z`,
				`anthropic-ratelimit-output-tokens-limit: 8000`, `anthropic-ratelimit-output-tokens-remaining: 1200`,
				`anthropic-ratelimit-output-tokens-reset: 2025-08-21T12:41:06.5Z`),
			now: anthropic.Add(-30 * s),
			want: []clientcall.Advertised{
				{Name: "requests", Unit: "requests", Limit: 50, Remaining: 0, Reset: anthropic.Add(-10 * s), Refill: true},
				{Name: "output-tokens", Unit: "output-tokens", Limit: 8000, Remaining: 1200, Reset: anthropic.Add(-23500 * time.Millisecond), Refill: true},
			},
		},

		// Malformed fields.
		{
			name: "IETF malformed policy ignored whole, RateLimit still read",
			h: header(`RateLimit-Policy: "permin";q=50;w=60,`,
				`RateLimit: "permin";r=12;t=30`),
			want: []clientcall.Advertised{
				{Name: "permin", Unit: "requests", Limit: -1, Remaining: 12, Reset: now.Add(30 * s)},
			},
		},
		{
			name: "IETF malformed RateLimit ignored whole",
			h:    header(`RateLimit-Policy: "permin";q=50;w=60`, `RateLimit: "permin;r=12`),
			want: []clientcall.Advertised{
				{Name: "permin", Unit: "requests", Limit: 50, Remaining: -1, Window: m},
			},
		},
		{
			name: "IETF parameters of the wrong type left unknown",
			h: header(`RateLimit-Policy: "permin";q="50";w=60, "perday";q=-1;w=0`,
				`RateLimit: "permin";r=-1;t=30, "perday";r=1.5;t=1.5`),
			want: []clientcall.Advertised{
				{Name: "permin", Unit: "requests", Limit: -1, Remaining: -1, Reset: now.Add(30 * s), Window: m},
			},
		},
		{
			name: "X-RateLimit garbage",
			h:    header(`X-RateLimit-Limit: lots`, `X-RateLimit-Remaining: -1`, `X-RateLimit-Reset: soon`),
		},
		{
			name: "OpenAI and Anthropic unreadable resets",
			h: header(`x-ratelimit-limit-requests: 60`, `x-ratelimit-reset-requests: -1s`,
				`x-ratelimit-limit-tokens: 1000`, `x-ratelimit-reset-tokens: 1d`,
				`anthropic-ratelimit-requests-limit: 50`, `anthropic-ratelimit-requests-reset: Thu, 21 Aug 2025 12:41:00 GMT`),
			want: []clientcall.Advertised{
				{Name: "requests", Unit: "requests", Limit: 60, Remaining: -1, Refill: true},
				{Name: "tokens", Unit: "tokens", Limit: 1000, Remaining: -1, Refill: true},
				{Name: "requests", Unit: "requests", Limit: 50, Remaining: -1, Refill: true},
			},
		},

		// Mixed families, and none.
		{
			name: "IETF and X-RateLimit from one gateway",
			h: header(`Retry-After: 5`, `RateLimit-Policy: "default";q=100;w=60`, `RateLimit: "default";r=0;t=5`,
				`X-RateLimit-Limit: 100`, `X-RateLimit-Remaining: 0`, `X-RateLimit-Reset: 5`),
			want: []clientcall.Advertised{
				{Name: "default", Unit: "requests", Limit: 100, Remaining: 0, Reset: now.Add(5 * s), Window: m},
				{Unit: "requests", Limit: 100, Remaining: 0, Reset: now.Add(5 * s)},
			},
		},
		{
			name: "nothing advertised",
			h:    header(`Content-Type: application/json`, `Retry-After: 120`, `Date: Tue, 21 Oct 2025 07:28:00 GMT`),
		},
		{
			name: "nil header",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := tt.now
			if at.IsZero() {
				at = now
			}
			got := clientcall.ParseAdvertised(tt.h, at)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAdvertised: got %+v, want %+v; diff (-want +got):\n%s", got, tt.want, diff)
			}
			if tt.want == nil && got != nil {
				t.Errorf("ParseAdvertised: got %#v, want nil", got)
			}
		})
	}
}
