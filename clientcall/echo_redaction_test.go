package clientcall_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

// TestHTTPRedactsEchoes calls an API that echoes its requests, in JSON as
// httpbin does, in answers of every kind (2xx, 4xx, 429, 5xx, batches), with
// secrets in headers (direct and from the environment), in the URL's user
// info and in its query. No answer, response or error, may hold a secret in
// any form the server wrote it in; what is not secret is kept. net/http
// sends the user info as an Authorization: Basic header.
func TestHTTPRedactsEchoes(t *testing.T) {
	const (
		direct   = "planted-direct-7f3a"
		token    = "planted-token-91bc"
		user     = "planted-user-44de"
		password = "planted/pass word-0c2"
		query    = "planted-query-d5e8"
		envName  = "CLIENTCALL_TEST_ECHO_TOKEN"
	)
	t.Setenv(envName, "Bearer "+token)
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	secrets := []string{direct, token, user, password, user + ":" + password, basic, query, "planted%2Fpass%20word-0c2"}

	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		echo, _ := json.Marshal(map[string]any{
			"headers": r.Header, "url": r.URL.String(), "args": r.URL.Query(), "data": string(body),
		})
		switch r.URL.Path {
		case "/batch":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, "[%s,%s]", echo, echo)
			return
		case "/429":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/400":
			w.WriteHeader(http.StatusBadRequest)
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
		}
		// Error excerpts are short: the credentials first.
		if r.URL.Path != "/200" {
			fmt.Fprintf(w, "auth=%s token=%s key=%s url=%s ", r.Header.Get("Authorization"), r.Header.Get("X-Api-Token"), r.Header.Get("X-Direct"), r.URL)
		}
		w.Write(echo)
	}))
	base := strings.Replace(srv.URL, "://", "://"+user+":planted%2Fpass%20word-0c2@", 1)
	newH := func(path string) *clientcall.HTTP {
		return newHTTP(t, &clientcall.HTTP{
			URL:         base + path + "?token=" + query + "&lang=en",
			ContentType: "application/json",
			Headers:     map[string]string{"X-Direct": direct},
			HeaderEnv:   map[string]string{"X-Api-Token": envName},
			Timeout:     5 * time.Second,
		})
	}

	var texts []string
	resp, err := newH("/200").Call(t.Context(), []byte(`{"id":1}`))
	if err != nil {
		t.Fatalf("/200: %v", err)
	}
	if !json.Valid(resp) || !strings.Contains(string(resp), "<redacted>") || !strings.Contains(string(resp), `"Content-Type":["application/json"]`) ||
		!strings.Contains(string(resp), `"lang":["en"]`) || !strings.Contains(string(resp), `{\"id\":1}`) {
		t.Errorf("/200 answered %s: want valid JSON, secrets redacted, the rest kept", resp)
	}
	texts = append(texts, string(resp))
	resps, err := newH("/batch").CallBatch(t.Context(), [][]byte{[]byte(`{"id":2}`), []byte(`{"id":3}`)})
	if err != nil || len(resps) != 2 {
		t.Fatalf("/batch: %d responses, %v", len(resps), err)
	}
	for _, r := range resps {
		if !json.Valid(r) || !strings.Contains(string(r), "<redacted>") {
			t.Errorf("/batch answered %s: want valid JSON with secrets redacted", r)
		}
		texts = append(texts, string(r))
	}
	for _, path := range []string{"/400", "/429", "/500"} {
		_, err := newH(path).Call(t.Context(), []byte(`{"id":4}`))
		if err == nil {
			t.Fatalf("%s: got no error", path)
		}
		if !strings.Contains(err.Error(), "auth=Basic <redacted> token=<redacted> key=<redacted> url=/"+path[1:]+"?token=<redacted>&lang=en") {
			t.Errorf("%s: error %q, want the echoed credentials redacted", path, err)
		}
		texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
	}
	if got := srv.conns.Load(); got == 0 {
		t.Fatal("the server was never called")
	}
	for _, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%q leaks planted secret %q", text, s)
			}
		}
	}
}

// TestHTTPRedactsASCIIEscapedEchoes: a header secret beyond ASCII, echoed by
// a server that writes JSON in ASCII only, as Python's json.dumps does by
// default: after reading the header's bytes as Latin-1 (as Python's
// http.server does), one \u00XX per byte; after reading them as UTF-8, one
// \uXXXX per character, in lower- or upper-case hex. No form reaches the
// response.
func TestHTTPRedactsASCIIEscapedEchoes(t *testing.T) {
	const secret = "HDRSECRET_é_CCCC"
	forms := []string{`HDRSECRET_\u00c3\u00a9_CCCC`, `HDRSECRET_\u00C3\u00A9_CCCC`, `HDRSECRET_\u00e9_CCCC`, `HDRSECRET_\u00E9_CCCC`}
	srv := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("X-Secret"); got != secret {
			t.Errorf("server got header %q, want %q", got, secret)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"latin1":"%s","LATIN1":"%s","utf8":"%s","UTF8":"%s"}`, forms[0], forms[1], forms[2], forms[3])
	}))
	h := &clientcall.HTTP{URL: srv.URL, Headers: map[string]string{"X-Secret": secret}}
	resp, err := h.Call(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(forms, secret) {
		if strings.Contains(string(resp), f) {
			t.Errorf("response %s holds the secret as %s", resp, f)
		}
	}
	if n := strings.Count(string(resp), "<redacted>"); n != len(forms) {
		t.Errorf("response %s: %d redactions, want %d", resp, n, len(forms))
	}
}
