package testserver_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/beamthrottle/beamthrottle/testserver"
)

func TestPageRoutes(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	for _, tc := range []struct {
		method, target string
		wantStatus     int
		wantType       string
		wantPrefix     string   // the body starts with this
		wantContains   []string // and contains these
	}{
		{"GET", "/", http.StatusOK, "text/html; charset=utf-8", "<!doctype html>", []string{
			`<link rel="stylesheet" href="web/uPlot.min.css">`,
			`<script src="web/uPlot.iife.min.js"></script>`,
			`<script src="web/page.js"></script>`,
			`<a href="stats"><code>GET /stats</code></a>`,
			`uPlot</a> 1.6.32`,
		}},
		{"HEAD", "/", http.StatusOK, "text/html; charset=utf-8", "", nil},
		{"GET", "/web/uPlot.iife.min.js", http.StatusOK, "text/javascript; charset=utf-8",
			"/*! https://github.com/leeoniya/uPlot (v1.6.32) */", []string{"var uPlot="}},
		{"GET", "/web/uPlot.min.css", http.StatusOK, "text/css; charset=utf-8", ".uplot", nil},
		{"GET", "/web/uPlot.LICENSE.txt", http.StatusOK, "text/plain; charset=utf-8",
			"The MIT License (MIT)", []string{"Leon Sorokin"}},
		{"GET", "/web/page.js", http.StatusOK, "text/javascript; charset=utf-8", "// Live chart", []string{
			`new URL("stats", location.href)`, "body.dataset.ready",
		}},
		{"GET", "/help", http.StatusOK, "text/plain; charset=utf-8", "beamthrottle quota test server", []string{
			"GET  /stats", "POST /report", "GET  /help",
		}},
		{"GET", "/web/", http.StatusNotFound, "", "", nil},
		{"GET", "/web/README.md", http.StatusNotFound, "", "", nil},
		{"GET", "/web/nope.js", http.StatusNotFound, "", "", nil},
		{"POST", "/", http.StatusMethodNotAllowed, "", "", nil},
		{"POST", "/web/page.js", http.StatusMethodNotAllowed, "", "", nil},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			r := serve(h, tc.method, tc.target, "")
			if r.status != tc.wantStatus {
				t.Fatalf("status: got %d, want %d", r.status, tc.wantStatus)
			}
			if tc.wantType == "" {
				return
			}
			if got := r.header.Get("Content-Type"); got != tc.wantType {
				t.Errorf("Content-Type: got %q, want %q", got, tc.wantType)
			}
			if !strings.HasPrefix(r.body, tc.wantPrefix) {
				t.Errorf("body: got %.80q…, want it to start with %q", r.body, tc.wantPrefix)
			}
			for _, s := range tc.wantContains {
				if !strings.Contains(r.body, s) {
					t.Errorf("body: got no %q in it", s)
				}
			}
		})
	}
}

// Every script and stylesheet the page loads, resolved against its URL, is
// served with a script or style type, so the page works with no network.
func TestPageAssetsAreServed(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	page := serve(h, "GET", "/", "")
	doc, err := html.Parse(strings.NewReader(page.body))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("http://127.0.0.1/")
	var refs []string
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || (n.Data != "script" && n.Data != "link") {
			continue
		}
		for _, a := range n.Attr {
			if a.Key == "src" || a.Key == "href" {
				refs = append(refs, a.Val)
			}
		}
	}
	if got, want := len(refs), 3; got != want {
		t.Fatalf("scripts and stylesheets: got %d (%q), want %d", got, refs, want)
	}
	for _, ref := range refs {
		u, err := base.Parse(ref)
		if err != nil {
			t.Fatal(err)
		}
		if u.Host != base.Host {
			t.Errorf("%q: got host %q, want this server (no CDN)", ref, u.Host)
			continue
		}
		r := serve(h, "GET", u.RequestURI(), "")
		if r.status != http.StatusOK {
			t.Errorf("GET %s: got %d, want 200", u.Path, r.status)
		}
		ct := r.header.Get("Content-Type")
		if !strings.HasPrefix(ct, "text/javascript") && !strings.HasPrefix(ct, "text/css") {
			t.Errorf("GET %s: got Content-Type %q, want text/javascript or text/css", u.Path, ct)
		}
		if got, want := r.header.Get("X-Content-Type-Options"), "nosniff"; got != want {
			t.Errorf("GET %s: got X-Content-Type-Options %q, want %q", u.Path, got, want)
		}
	}
}

// The files change only with the binary: a client holding the current
// ETag gets 304 and no body.
func TestPageRevalidatesByETag(t *testing.T) {
	h := newHandler(t, testserver.Config{})
	for _, target := range []string{"/", "/web/uPlot.iife.min.js"} {
		first := serve(h, "GET", target, "")
		etag := first.header.Get("ETag")
		if etag == "" {
			t.Fatalf("GET %s: got no ETag", target)
		}
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("If-None-Match", etag)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got, want := rec.Code, http.StatusNotModified; got != want {
			t.Errorf("GET %s with If-None-Match %s: got %d, want %d", target, etag, got, want)
		}
		if rec.Body.Len() != 0 {
			t.Errorf("GET %s with If-None-Match: got a %d-byte body, want none", target, rec.Body.Len())
		}
	}
}
