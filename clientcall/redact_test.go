package clientcall

import (
	"encoding/base64"
	"net/http"
	"slices"
	"testing"
)

func TestSecretsOf(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("alice:pa ss/word"))
	for _, tc := range []struct {
		name          string
		header        map[string]string
		url           string
		want, notWant []string
	}{
		{name: "header values and tokens", header: map[string]string{"Authorization": "Bearer tok-123", "X-Key": "k-456"},
			url: "http://h/p", want: []string{"Bearer tok-123", "tok-123", "k-456"}},
		{name: "public headers", header: map[string]string{"Content-Type": "application/json", "Accept": "text/plain", "User-Agent": "me/1.0"},
			url: "http://h/p", notWant: []string{"application/json", "text/plain", "me/1.0"}},
		{name: "user info", url: "http://alice:pa%20ss%2Fword@h/p",
			want: []string{"alice", "pa ss/word", "alice:pa ss/word", basic, "pa%20ss%2Fword"}},
		{name: "user name alone", url: "https://sk_live_abc@h/p",
			want: []string{"sk_live_abc", base64.StdEncoding.EncodeToString([]byte("sk_live_abc:"))}},
		{name: "query values", url: "http://h/p?token=a%2Fb%3Dc&lang=english&flag",
			want: []string{"a%2Fb%3Dc", "a/b=c", "english"}, notWant: []string{"token", "lang", "flag"}},
		{name: "path", url: "http://h/v1/projects/secretive", notWant: []string{"secretive", "/v1/projects/secretive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			got := secretsOf(h, tc.url)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("got %q, want %q among them", got, w)
				}
			}
			for _, w := range tc.notWant {
				if slices.Contains(got, w) {
					t.Errorf("got %q, want no %q", got, w)
				}
			}
		})
	}
}

func TestRedactor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"none configured", nil, "abc tok-123", "abc tok-123"},
		{"as it is", []string{"tok-123"}, "x tok-123 y tok-123", "x <redacted> y <redacted>"},
		{"longest first", []string{"tok", "Bearer tok-123", "tok-123"}, "Bearer tok-123 and tok-123", "<redacted> and <redacted>"},
		{"too short", []string{"abc"}, "abc", "abc"},
		{"escaped in JSON", []string{`a"b\c`}, `{"h":"a\"b\\c"}`, `{"h":"<redacted>"}`},
		{"escaped in JSON by Go", []string{"a<b>&c"}, `{"h":"a\u003cb\u003e\u0026c"}`, `{"h":"<redacted>"}`},
		{"slashes escaped in JSON", []string{"ab/cd"}, `{"h":"ab\/cd"}`, `{"h":"<redacted>"}`},
		{"escaped in a URL", []string{"a b/c&d"}, "?t=a+b%2Fc%26d /a%20b%2Fc&d", "?t=<redacted> /<redacted>"},
		{"not there", []string{"tok-123"}, "tok-12 ok-123", "tok-12 ok-123"},
		{"non-ASCII escaped as UTF-8", []string{"SECRET_é_CCCC"}, `{"h":"SECRET_\u00e9_CCCC","H":"SECRET_\u00E9_CCCC"}`,
			`{"h":"<redacted>","H":"<redacted>"}`},
		{"non-ASCII escaped as Latin-1", []string{"SECRET_é_CCCC"}, `{"h":"SECRET_\u00c3\u00a9_CCCC","H":"SECRET_\u00C3\u00A9_CCCC"}`,
			`{"h":"<redacted>","H":"<redacted>"}`},
		{"beyond U+FFFF escaped as a surrogate pair", []string{"SECRET_😀/x"}, `{"h":"SECRET_\ud83d\ude00\/x"}`, `{"h":"<redacted>"}`},
		{"non-ASCII with JSON escapes", []string{`SECRET_"é"`}, `{"h":"SECRET_\"\u00e9\""}`, `{"h":"<redacted>"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRedactor(tc.secrets)
			if got := r.string(tc.in); got != tc.want {
				t.Errorf("string(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := string(r.bytes([]byte(tc.in))); got != tc.want {
				t.Errorf("bytes(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestRedactorKeepsCleanBodies: a body without secrets is returned as it
// is, not copied.
func TestRedactorKeepsCleanBodies(t *testing.T) {
	body := []byte(`{"translated":"hello"}`)
	for _, r := range []redactor{{}, newRedactor([]string{"tok-123"})} {
		if got := r.bytes(body); &got[0] != &body[0] {
			t.Errorf("bytes returned a copy of a body without secrets (%d forms)", len(r.forms))
		}
	}
}

func TestRedactorPartialSuffix(t *testing.T) {
	r := newRedactor([]string{"tok-123"})
	for in, want := range map[string]string{
		"cut at tok-1": "cut at <redacted>",
		"cut at tok":   "cut at <redacted>",
		"cut cleanly.": "cut cleanly.",
	} {
		if got := r.partialSuffix(in); got != want {
			t.Errorf("partialSuffix(%q) = %q, want %q", in, got, want)
		}
	}
}
