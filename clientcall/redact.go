package clientcall

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// publicHeaders are the headers whose values describe the request rather
// than authorise it: [HTTP] does not treat their values as secrets, so an
// answer that mentions them ("application/json") is left as it is.
var publicHeaders = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Accept-Language": true, "Content-Encoding": true,
	"Content-Language": true, "Content-Type": true, "Host": true, "User-Agent": true,
}

// secretsOf returns the values an HTTP caller sends that may be
// credentials: the values of its headers (but publicHeaders) and the word
// after a scheme ("Bearer <token>"); from the URL, the user name, the
// password, "user:password" and its base64 form (the Authorization: Basic
// header net/http sends for them), each as written in the URL and decoded;
// and the values of the URL's query, as written and decoded.
func secretsOf(header http.Header, rawURL string) []string {
	var s []string
	for name, values := range header {
		if publicHeaders[name] {
			continue
		}
		for _, v := range values {
			s = append(s, v)
			if _, token, ok := strings.Cut(v, " "); ok {
				s = append(s, token)
			}
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return s
	}
	if u.User != nil {
		name := u.User.Username()
		password, _ := u.User.Password()
		pair := name + ":" + password
		s = append(s, name, password, pair, base64.StdEncoding.EncodeToString([]byte(pair)), u.User.String())
		rawName, rawPassword, _ := strings.Cut(u.User.String(), ":")
		s = append(s, rawName, rawPassword)
	}
	for kv := range strings.SplitSeq(u.RawQuery, "&") {
		_, v, _ := strings.Cut(kv, "=")
		s = append(s, v)
		if d, err := url.QueryUnescape(v); err == nil {
			s = append(s, d)
		}
	}
	return s
}

// redactor replaces secrets with "<redacted>" in text. Its zero value
// redacts nothing. Immutable.
type redactor struct {
	forms    []string          // every form of every secret, longest first
	raw      [][]byte          // forms, as bytes
	replacer *strings.Replacer // nil when forms is empty
}

// newRedactor returns a redactor of secrets, each in the forms an answer
// may quote it in: as it is, escaped in a JSON string (minimally, as Go
// escapes it, with "\/", and as encoders that write ASCII only escape it:
// see asciiEscapes), and escaped in a URL query and path. Values shorter
// than minRedactLen are left out: they would match by chance.
func newRedactor(secrets []string) redactor {
	seen := map[string]bool{}
	var r redactor
	add := func(f string) {
		if len(f) >= minRedactLen && !seen[f] {
			seen[f] = true
			r.forms = append(r.forms, f)
		}
	}
	for _, s := range secrets {
		if len(s) < minRedactLen {
			continue
		}
		add(s)
		minimal := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`).Replace(s)
		add(minimal)
		add(strings.ReplaceAll(minimal, "/", `\/`))
		if b, err := json.Marshal(s); err == nil {
			add(string(b[1 : len(b)-1]))
		}
		for _, f := range asciiEscapes(minimal) {
			add(f)
			add(strings.ReplaceAll(f, "/", `\/`))
		}
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
	}
	if len(r.forms) == 0 {
		return r
	}
	slices.SortStableFunc(r.forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(r.forms))
	for _, f := range r.forms {
		pairs = append(pairs, f, redacted)
		r.raw = append(r.raw, []byte(f))
	}
	r.replacer = strings.NewReplacer(pairs...)
	return r
}

// asciiEscapes returns the forms of s, a JSON string's content, that JSON
// encoders writing ASCII only give it (Python's json.dumps by default,
// Jackson's ESCAPE_NON_ASCII, PHP's json_encode): every character beyond
// ASCII as \uXXXX, in lower- and upper-case hex. Each is made from two
// readings of s's bytes: UTF-8 (a character beyond U+FFFF as its UTF-16
// surrogate pair), and Latin-1, one \u00XX per byte, which an echo that
// decoded the request as Latin-1 writes. s without such characters has none.
func asciiEscapes(s string) []string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return nil
	}
	var forms []string
	for _, hex := range []string{"\\u%04x", "\\u%04X"} {
		var bUTF8, bLatin1 strings.Builder
		for _, r := range s {
			switch {
			case r < utf8.RuneSelf:
				bUTF8.WriteRune(r)
			case r > 0xFFFF:
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&bUTF8, hex+hex, hi, lo)
			default:
				fmt.Fprintf(&bUTF8, hex, r)
			}
		}
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < utf8.RuneSelf {
				bLatin1.WriteByte(c)
			} else {
				fmt.Fprintf(&bLatin1, hex, c)
			}
		}
		forms = append(forms, bUTF8.String(), bLatin1.String())
	}
	return forms
}

// string returns s with every secret replaced.
func (r redactor) string(s string) string {
	if r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// bytes returns b with every secret replaced: b itself when it holds none.
func (r redactor) bytes(b []byte) []byte {
	for _, f := range r.raw {
		if bytes.Contains(b, f) {
			return []byte(r.replacer.Replace(string(b)))
		}
	}
	return b
}

// partialSuffix replaces, in s cut short from a longer text, a trailing
// start of a secret, which string would not recognise.
func (r redactor) partialSuffix(s string) string {
	for _, f := range r.forms {
		for k := len(f) - 1; k > 0; k-- {
			if strings.HasSuffix(s, f[:k]) {
				return s[:len(s)-k] + redacted
			}
		}
	}
	return s
}
