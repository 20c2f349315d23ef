package testserver

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"time"
)

// The live chart page. GET / serves web/index.html, which loads
// web/page.js and uPlot from GET /web/... and polls GET /stats every
// second, charting accepted, rejected, client-throttled and errored
// requests per second. uPlot is the npm package "uplot" 1.6.32 (MIT
// licence, web/uPlot.LICENSE.txt), vendored as its minified dist files so
// that the page works offline; web/README.md says how to upgrade it.
//
//go:embed web/index.html web/page.js web/uPlot.iife.min.js web/uPlot.min.css web/uPlot.LICENSE.txt
var webFS embed.FS

// assetTypes maps the extensions of the embedded files to their
// Content-Type, fixed here rather than read from the system's MIME tables.
var assetTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
}

// asset is an embedded file ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// assets holds the embedded files by base name, e.g. "page.js".
var assets = loadAssets(webFS)

// loadAssets reads the files of fsys's web directory. It panics on an
// extension missing from assetTypes, which is a build mistake.
func loadAssets(fsys fs.FS) map[string]asset {
	entries, err := fs.ReadDir(fsys, "web")
	if err != nil {
		panic("testserver: reading embedded web files: " + err.Error())
	}
	m := make(map[string]asset, len(entries))
	for _, e := range entries {
		name := e.Name()
		body, err := fs.ReadFile(fsys, path.Join("web", name))
		if err != nil {
			panic("testserver: reading embedded web files: " + err.Error())
		}
		ct, ok := assetTypes[path.Ext(name)]
		if !ok {
			panic(fmt.Sprintf("testserver: embedded web file %q has no known content type", name))
		}
		sum := sha256.Sum256(body)
		m[name] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return m
}

// pageRoutes registers the chart page at GET /, its files at GET /web/...,
// and the text route list at GET /help.
func (h *Handler) pageRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, r, assets["index.html"])
	})
	mux.HandleFunc("GET /web/{name}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		serveAsset(w, r, a)
	})
	mux.HandleFunc("GET /help", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, indexPage)
	})
}

// serveAsset answers with a, or 304 if the client's copy is current. The
// files change only with the binary, so clients revalidate by ETag.
func serveAsset(w http.ResponseWriter, r *http.Request, a asset) {
	hdr := w.Header()
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
