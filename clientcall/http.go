package clientcall

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// Defaults applied by [HTTP] to zero-valued fields.
const (
	DefaultTimeout          = 2 * time.Minute
	DefaultMaxResponseBytes = 10 << 20
	DefaultMaxConnsPerHost  = 512
)

const (
	// maxExcerptBytes bounds StatusError.Message for non-2xx answers.
	maxExcerptBytes = 200
	// excerptReadBytes is how much of an error body is read for the excerpt
	// (more than maxExcerptBytes, so header values can be redacted whole).
	excerptReadBytes = 4 << 10
	// maxDrainBytes is how much of an unread body is discarded to keep the
	// connection reusable; larger bodies cost the connection instead.
	maxDrainBytes = 64 << 10
	// minRedactLen is the shortest secret redacted (see newRedactor).
	minRedactLen = 4
	redacted     = "<redacted>"
)

// setupMu serialises building and releasing [HTTP] runtimes. It is global,
// not per HTTP, so that HTTP holds no lock and can be copied and printed.
var setupMu sync.Mutex

// HTTP is a [Caller] that sends each request's bytes as the body of an HTTP
// request to URL and returns the response body. It also implements
// [BatchCaller], sending several requests as one JSON array (see
// [HTTP.CallBatch]), and [Setupper] and [Teardowner].
//
// Answers map to errors as follows, all of them [*StatusError]s:
//   - 2xx: the body, up to MaxResponseBytes; a larger body is an error
//     wrapping [ErrResponseTooLarge];
//   - 429, and 503 with a valid Retry-After: Throttled, with RetryAfter
//     parsed from the header (delta-seconds or HTTP-date);
//   - any other status, including 3xx (redirects are not followed, so headers
//     are never re-sent to another host): not throttled, with a short body
//     excerpt as Message;
//   - connection errors and timeouts: StatusCode 0, Err the cause
//     (context.DeadlineExceeded for the per-call Timeout).
//
// Configure an HTTP through its exported fields before first use and do not
// change them afterwards. Setup is optional: Call and CallBatch set up
// lazily. Both are safe for concurrent use; all calls share one http.Client,
// so connections are reused.
//
// What may be a credential is redacted: the values of the headers (but
// Accept, Accept-Encoding, Accept-Language, Content-Encoding,
// Content-Language, Content-Type, Host and User-Agent), the user name and
// password of URL (and the Authorization: Basic value net/http sends for
// them) and the values of URL's query. They are never put in errors or in
// String's output, and wherever an answer quotes one of them (as it is,
// escaped in JSON or in a URL) it is replaced by "<redacted>", in the
// responses Call and CallBatch return as in error messages, so an API that
// echoes its requests does not carry them into outputs. Values shorter than
// 4 bytes are not redacted. Values in Headers and URL are part of the
// serialised pipeline (the job graph); pass secrets through HeaderEnv
// instead.
type HTTP struct {
	// URL is the endpoint, http or https. Required.
	URL string
	// Method is the request method; "" means POST.
	Method string
	// ContentType is the Content-Type of Call's requests; "" means
	// application/octet-stream. CallBatch's requests are application/json
	// whatever ContentType says. A "Content-Type" in Headers or HeaderEnv
	// overrides both.
	ContentType string
	// Headers are sent on every request, by Call and CallBatch (overriding
	// ContentType and the batch form's application/json for
	// "Content-Type"). Their values are never printed.
	Headers map[string]string
	// HeaderEnv maps header names to environment variable names whose values
	// are sent as those headers, resolved by Setup on each worker, so secrets
	// stay out of the job graph. It overrides Headers for the same name. An
	// unset or empty variable makes Setup fail with an error naming the
	// variable.
	HeaderEnv map[string]string
	// Timeout bounds each call, including reading the response body;
	// 0 means DefaultTimeout (2m, above the tail of a slow API's latency).
	Timeout time.Duration
	// MaxResponseBytes bounds the response body; 0 means
	// DefaultMaxResponseBytes (10 MiB).
	MaxResponseBytes int64
	// MaxConnsPerHost bounds the connections to the server (busy and idle);
	// calls beyond it wait for a free connection, and the wait counts in
	// their latency. 0 means DefaultMaxConnsPerHost (512): high enough that
	// the throttle's calls in flight, not the connection pool, bound a slow
	// API's calls (a 2 s API at 20 calls/s has 40 under way).
	MaxConnsPerHost int
	// ItemStatusField, when set (e.g. "status"), names a member of the
	// entries of a batch response (see [HTTP.CallBatch]) that holds the
	// item's own HTTP status: an entry that is a JSON object whose member of
	// that name is a number of 300 or more fails that item. "" means every
	// entry of a 2xx batch response is a success. Call ignores it.
	ItemStatusField string

	rt atomic.Value // *httpRuntime; nil until Setup or the first call
}

// httpRuntime is everything Call needs, built once by Setup. Immutable.
type httpRuntime struct {
	client   *http.Client
	method   string
	url      string // full URL, never printed
	display  string // scheme://host/path, for errors
	header   http.Header
	batchHdr http.Header // header, with the batch form's Content-Type
	host     string      // Host header override, if any
	timeout  time.Duration
	maxBytes int64
	secrets  redactor // what may be credentials (see secretsOf)
	statusAt string   // ItemStatusField
}

var (
	_ Caller[[]byte, []byte]      = (*HTTP)(nil)
	_ BatchCaller[[]byte, []byte] = (*HTTP)(nil)
	_ Setupper                    = (*HTTP)(nil)
	_ Teardowner                  = (*HTTP)(nil)
)

// Setup validates the configuration, resolves HeaderEnv from the environment
// and builds the HTTP client. Calling it again rebuilds them (and closes the
// previous client's idle connections). Its errors name fields, headers and
// environment variables but never header values.
func (h *HTTP) Setup(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	setupMu.Lock()
	defer setupMu.Unlock()
	rt, err := h.build()
	if err != nil {
		return err
	}
	if old := h.load(); old != nil {
		old.client.CloseIdleConnections()
	}
	h.rt.Store(rt)
	return nil
}

// Teardown closes idle connections and releases the client. A later Call sets
// up again.
func (h *HTTP) Teardown(ctx context.Context) error {
	setupMu.Lock()
	defer setupMu.Unlock()
	if old := h.load(); old != nil {
		h.rt.Store((*httpRuntime)(nil))
		old.client.CloseIdleConnections()
	}
	return nil
}

func (h *HTTP) load() *httpRuntime {
	rt, _ := h.rt.Load().(*httpRuntime)
	return rt
}

// runtime returns the runtime, setting up first if needed.
func (h *HTTP) runtime() (*httpRuntime, error) {
	if rt := h.load(); rt != nil {
		return rt, nil
	}
	setupMu.Lock()
	defer setupMu.Unlock()
	if rt := h.load(); rt != nil {
		return rt, nil
	}
	rt, err := h.build()
	if err != nil {
		return nil, err
	}
	h.rt.Store(rt)
	return rt, nil
}

func (h *HTTP) build() (*httpRuntime, error) {
	display, err := checkURL(h.URL)
	if err != nil {
		return nil, err
	}
	method := cmp.Or(h.Method, http.MethodPost)
	if !validToken(method) {
		return nil, errors.New("clientcall: HTTP.Method is not a valid HTTP method")
	}
	switch {
	case h.Timeout < 0:
		return nil, fmt.Errorf("clientcall: HTTP.Timeout is negative (%v)", h.Timeout)
	case h.MaxResponseBytes < 0:
		return nil, fmt.Errorf("clientcall: HTTP.MaxResponseBytes is negative (%d)", h.MaxResponseBytes)
	case h.MaxConnsPerHost < 0:
		return nil, fmt.Errorf("clientcall: HTTP.MaxConnsPerHost is negative (%d)", h.MaxConnsPerHost)
	}

	rt := &httpRuntime{
		method:   method,
		url:      h.URL,
		display:  display,
		header:   make(http.Header),
		timeout:  cmp.Or(h.Timeout, DefaultTimeout),
		maxBytes: cmp.Or[int64](h.MaxResponseBytes, DefaultMaxResponseBytes),
		statusAt: h.ItemStatusField,
	}
	rt.header.Set("Content-Type", cmp.Or(h.ContentType, "application/octet-stream"))
	userContentType := false

	set := func(name, value, what string) error {
		if !validToken(name) {
			return fmt.Errorf("clientcall: %s has an invalid header name %q", what, name)
		}
		if !validHeaderValue(value) {
			return fmt.Errorf("clientcall: %s: value of header %q contains invalid characters", what, name)
		}
		switch http.CanonicalHeaderKey(name) {
		case "Host":
			rt.host = value
		case "Content-Type":
			userContentType = true
			fallthrough
		default:
			rt.header.Set(name, value)
		}
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(h.Headers)) {
		if err := set(name, h.Headers[name], "HTTP.Headers"); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(h.HeaderEnv)) {
		env := h.HeaderEnv[name]
		value, ok := os.LookupEnv(env)
		switch {
		case env == "":
			return nil, fmt.Errorf("clientcall: HTTP.HeaderEnv names no environment variable for header %q", name)
		case !ok:
			return nil, fmt.Errorf("clientcall: environment variable %s (HTTP.HeaderEnv for header %q) is not set", env, name)
		case value == "":
			return nil, fmt.Errorf("clientcall: environment variable %s (HTTP.HeaderEnv for header %q) is empty", env, name)
		}
		if err := set(name, value, "HTTP.HeaderEnv (variable "+env+")"); err != nil {
			return nil, err
		}
	}
	rt.secrets = newRedactor(secretsOf(rt.header, h.URL))
	rt.batchHdr = rt.header.Clone()
	if !userContentType {
		rt.batchHdr.Set("Content-Type", "application/json")
	}

	conns := cmp.Or(h.MaxConnsPerHost, DefaultMaxConnsPerHost)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxConnsPerHost = conns
	tr.MaxIdleConnsPerHost = conns
	rt.client = &http.Client{
		Transport: tr,
		// Never follow redirects: they would re-send the configured headers,
		// possibly to another host, and turn a POST into a GET.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return rt, nil
}

// Call sends req as the request body and returns the response body, secrets
// redacted (see [HTTP]). It sets up first if Setup has not been called. See
// [HTTP] for how answers map to errors.
func (h *HTTP) Call(ctx context.Context, req []byte) ([]byte, error) {
	rt, err := h.runtime()
	if err != nil {
		return nil, err
	}
	a, err := rt.do(ctx, req, rt.header)
	if err != nil {
		return nil, err
	}
	return rt.secrets.bytes(a.body), nil
}

// answer is a 2xx answer with its whole body.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// do sends one request with body and header and returns the 2xx answer, or
// the error for any other outcome (see [HTTP]).
func (rt *httpRuntime) do(ctx context.Context, body []byte, header http.Header) (answer, error) {
	callCtx, cancel := context.WithTimeout(ctx, rt.timeout)
	defer cancel()

	r, err := http.NewRequestWithContext(callCtx, rt.method, rt.url, bytes.NewReader(body))
	if err != nil {
		return answer{}, rt.fail(ctx, callCtx, 0, "", err)
	}
	r.Header = header.Clone()
	if rt.host != "" {
		r.Host = rt.host
	}
	resp, err := rt.client.Do(r)
	if err != nil {
		return answer{}, rt.fail(ctx, callCtx, 0, "", err)
	}
	defer resp.Body.Close()
	if advertisedSink(ctx) != nil {
		ReportAdvertised(ctx, ParseAdvertised(resp.Header, time.Now()))
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answer{}, rt.statusError(resp)
	}
	if resp.ContentLength > rt.maxBytes {
		return answer{}, rt.tooLarge(resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, rt.maxBytes+1))
	if err != nil {
		return answer{}, rt.fail(ctx, callCtx, resp.StatusCode, "reading response body: ", err)
	}
	if int64(len(b)) > rt.maxBytes {
		return answer{}, rt.tooLarge(resp.StatusCode)
	}
	return answer{code: resp.StatusCode, header: resp.Header, body: b}, nil
}

// statusError builds the error for a non-2xx answer and drains its body.
func (rt *httpRuntime) statusError(resp *http.Response) error {
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, excerptReadBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainBytes))
	body := string(excerpt)
	if len(excerpt) == excerptReadBytes {
		// The read limit may have cut a secret in two: its start would
		// escape redaction.
		body = rt.secrets.partialSuffix(body)
	}
	e := &StatusError{
		StatusCode: resp.StatusCode,
		Method:     rt.method,
		URL:        rt.display,
		Message:    rt.excerpt(body),
	}
	e.Throttled, e.RetryAfter = throttling(resp.StatusCode, resp.Header)
	return e
}

// throttling reports whether status, answered with header, is a refusal for
// quota reasons (429, and 503 with a valid Retry-After), and then the
// back-off from Retry-After.
func throttling(status int, header http.Header) (bool, time.Duration) {
	ra, hasRA := ParseRetryAfter(header.Get("Retry-After"), time.Now())
	switch status {
	case http.StatusTooManyRequests:
		return true, ra
	case http.StatusServiceUnavailable:
		return hasRA, ra
	}
	return false, 0
}

func (rt *httpRuntime) tooLarge(code int) error {
	return &StatusError{
		StatusCode: code,
		Method:     rt.method,
		URL:        rt.display,
		Message:    "response body larger than MaxResponseBytes (" + strconv.FormatInt(rt.maxBytes, 10) + " bytes)",
		Err:        ErrResponseTooLarge,
	}
}

// fail builds the error for a call that got no (complete) answer: parent is
// the caller's context, call the per-call one.
func (rt *httpRuntime) fail(parent, call context.Context, code int, prefix string, err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err // url.Error's text holds the full URL, query included
	}
	e := &StatusError{StatusCode: code, Method: rt.method, URL: rt.display, Err: err}
	switch {
	case parent.Err() != nil:
		e.Err = context.Cause(parent)
		e.Message = e.Err.Error()
	case errors.Is(call.Err(), context.DeadlineExceeded):
		e.Err = context.DeadlineExceeded
		e.Message = "timeout after " + rt.timeout.String()
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		e.Message = "connection closed by server: " + err.Error()
	default:
		e.Message = err.Error()
	}
	e.Message = rt.secrets.string(prefix + e.Message)
	return e
}

// excerpt turns a response body into a short single-line message without
// secrets.
func (rt *httpRuntime) excerpt(body string) string {
	s := rt.secrets.string(strings.ToValidUTF8(body, "\uFFFD"))
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
	if len(s) <= maxExcerptBytes {
		return s
	}
	cut := maxExcerptBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// String describes h without header values or URL query: header names are
// listed, values replaced by "<redacted>".
func (h HTTP) String() string {
	return fmt.Sprintf("clientcall.HTTP{Method: %s, URL: %s, ContentType: %s, Headers: %s, HeaderEnv: %s, Timeout: %v, MaxResponseBytes: %d, MaxConnsPerHost: %d, ItemStatusField: %q}",
		cmp.Or(h.Method, http.MethodPost), displayURL(h.URL), cmp.Or(h.ContentType, "application/octet-stream"),
		redactedHeaders(h.Headers, false), envNames(h.HeaderEnv, false),
		cmp.Or(h.Timeout, DefaultTimeout), cmp.Or[int64](h.MaxResponseBytes, DefaultMaxResponseBytes), cmp.Or(h.MaxConnsPerHost, DefaultMaxConnsPerHost),
		h.ItemStatusField)
}

// GoString is like String in Go syntax (for %#v), without header values or
// URL query.
func (h HTTP) GoString() string {
	return fmt.Sprintf("clientcall.HTTP{URL:%q, Method:%q, ContentType:%q, Headers:%s, HeaderEnv:%s, Timeout:%d, MaxResponseBytes:%d, MaxConnsPerHost:%d, ItemStatusField:%q}",
		displayURL(h.URL), h.Method, h.ContentType, redactedHeaders(h.Headers, true), envNames(h.HeaderEnv, true),
		int64(h.Timeout), h.MaxResponseBytes, h.MaxConnsPerHost, h.ItemStatusField)
}

func redactedHeaders(m map[string]string, goSyntax bool) string {
	if m == nil && goSyntax {
		return "map[string]string(nil)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if goSyntax {
			parts = append(parts, fmt.Sprintf("%q:%q", k, redacted))
		} else {
			parts = append(parts, k+":"+redacted)
		}
	}
	if goSyntax {
		return "map[string]string{" + strings.Join(parts, ", ") + "}"
	}
	return "map[" + strings.Join(parts, " ") + "]"
}

// envNames prints HeaderEnv: header and variable names are not secret.
func envNames(m map[string]string, goSyntax bool) string {
	if goSyntax {
		return fmt.Sprintf("%#v", m)
	}
	return fmt.Sprint(m)
}

// checkURL validates u and returns its printable form.
func checkURL(u string) (string, error) {
	if u == "" {
		return "", errors.New("clientcall: HTTP.URL is empty")
	}
	p, err := url.Parse(u)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // url.Error's text holds the whole URL
		}
		return "", fmt.Errorf("clientcall: HTTP.URL is invalid: %v", err)
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return "", fmt.Errorf("clientcall: HTTP.URL %s: scheme must be http or https", displayURL(u))
	}
	if p.Host == "" {
		return "", fmt.Errorf("clientcall: HTTP.URL %s has no host", displayURL(u))
	}
	return displayURL(u), nil
}

// displayURL returns scheme://host/path of u, dropping user info, query and
// fragment (they may hold credentials). A query is shown as "?<redacted>".
func displayURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "<invalid URL>"
	}
	s := (&url.URL{Scheme: p.Scheme, Host: p.Host, Path: p.Path, RawPath: p.RawPath, Opaque: p.Opaque}).String()
	if p.RawQuery != "" || p.ForceQuery {
		s += "?" + redacted
	}
	return s
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c <= ' ' || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 || c == 0x7f {
			return false
		}
	}
	return true
}

func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
