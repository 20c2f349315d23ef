package clientcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CallBatch is the JSON-array batch form of [HTTP.Call]: it sends reqs in one
// HTTP request whose body is a JSON array of the items, each item's bytes
// embedded as they are, and returns one response per item, taken from the
// JSON array the server answers. The request goes to the same URL with the
// same method, headers, Timeout and redaction as Call's, and sets up first if
// needed; its Content-Type is application/json unless Headers or HeaderEnv
// set one (ContentType applies to Call only). MaxResponseBytes bounds the
// whole batch response.
//
// Items: an item that is not valid JSON (as json.Valid says) fails alone,
// with an error naming its index in reqs, counted from 0 ("clientcall: batch
// item 2 is not valid JSON"), and is left out of the request. If no item is
// valid, no request is made.
//
// Answers:
//   - 2xx whose body is a JSON array with exactly one entry per item sent:
//     the k-th entry answers the k-th item sent, as its raw JSON bytes,
//     unchanged but for secrets, redacted as [HTTP] says. With ItemStatusField set, an entry that is a JSON object
//     whose member of that name is a number of 300 or more fails its item
//     with a [*StatusError]: StatusCode that number (any fraction dropped),
//     Throttled and RetryAfter as for a whole answer with that status and the
//     response's Retry-After header (429, and 503 with a valid Retry-After,
//     are throttling), Message a bounded, redacted excerpt of the entry.
//     Other entries are successes.
//   - 2xx with any other body (not a JSON array, or the wrong number of
//     entries): a [*StatusError] for the whole call with the status, not
//     throttled, whose Err is [ErrBatchResponse].
//   - anything else (non-2xx, connection error, timeout, body too large):
//     the [*StatusError] Call would return, for the whole call, so a 429
//     throttles every item.
//
// The outcome follows the [BatchCaller] contract: a whole-call error is
// returned as it is, with nil responses, and applies to every item, those
// that were not valid JSON included; otherwise the responses have one entry
// per request, and failed items are reported by a [*BatchError], returned
// only when at least one item failed. CallBatch is safe for concurrent use.
func (h *HTTP) CallBatch(ctx context.Context, reqs [][]byte) ([][]byte, error) {
	rt, err := h.runtime()
	if err != nil {
		return nil, err
	}
	var errs []error // nil until an item fails
	failItem := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(reqs))
		}
		errs[i] = err
	}
	size, sent := 2, 0
	for i, req := range reqs {
		if !json.Valid(req) {
			failItem(i, fmt.Errorf("clientcall: batch item %d is not valid JSON", i))
			continue
		}
		size += len(req) + 1
		sent++
	}
	resps := make([][]byte, len(reqs))
	if sent > 0 {
		var body bytes.Buffer
		body.Grow(size)
		body.WriteByte('[')
		for i, req := range reqs {
			if errs != nil && errs[i] != nil {
				continue
			}
			if body.Len() > 1 {
				body.WriteByte(',')
			}
			body.Write(req)
		}
		body.WriteByte(']')

		a, err := rt.do(ctx, body.Bytes(), rt.batchHdr)
		if err != nil {
			return nil, err
		}
		entries, err := splitArray(a.body, sent)
		if err != nil {
			return nil, rt.batchResponseError(a, err)
		}
		k := 0
		for i := range reqs {
			if errs != nil && errs[i] != nil {
				continue
			}
			entry := entries[k]
			k++
			if err := rt.itemError(entry, a); err != nil {
				failItem(i, err)
				continue
			}
			resps[i] = rt.secrets.bytes(entry)
		}
	}
	if errs != nil {
		return resps, &BatchError{Errs: errs}
	}
	return resps, nil
}

// badArrayError says why a batch response is not a JSON array with the
// expected number of entries; excerpt asks for an excerpt of the body.
type badArrayError struct {
	msg     string
	excerpt bool
}

func (e *badArrayError) Error() string { return e.msg }

// splitArray returns the n entries of the JSON array that body must be, each
// a copy of the entry's bytes.
func splitArray(body []byte, n int) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	switch {
	case err == io.EOF:
		return nil, &badArrayError{msg: "batch response is not a JSON array: empty body"}
	case err != nil, tok != json.Delim('['):
		return nil, &badArrayError{msg: "batch response is not a JSON array", excerpt: true}
	}
	entries := make([][]byte, 0, n)
	count := 0
	var extra json.RawMessage // entries beyond n, counted for the message
	for dec.More() {
		if count < n {
			var entry json.RawMessage
			err = dec.Decode(&entry)
			entries = append(entries, entry)
		} else {
			err = dec.Decode(&extra)
		}
		if err != nil {
			return nil, invalidArray(err)
		}
		count++
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, invalidArray(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &badArrayError{msg: "batch response has more data after the JSON array"}
	}
	if count != n {
		return nil, &badArrayError{msg: fmt.Sprintf("batch response has %d entries for %d items sent", count, n)}
	}
	return entries, nil
}

func invalidArray(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &badArrayError{msg: "batch response is not a valid JSON array: " + err.Error()}
}

// batchResponseError is the whole-call error for a 2xx answer that is not
// the JSON array expected.
func (rt *httpRuntime) batchResponseError(a answer, err error) error {
	msg := err.Error()
	if be, ok := err.(*badArrayError); ok && be.excerpt {
		msg += ": " + rt.excerptOf(a.body)
	}
	return &StatusError{
		StatusCode: a.code,
		Method:     rt.method,
		URL:        rt.display,
		Message:    rt.secrets.string(msg),
		Err:        ErrBatchResponse,
	}
}

// itemError returns the error for a batch response entry whose member
// ItemStatusField holds a status of 300 or more, and nil for any other entry.
func (rt *httpRuntime) itemError(entry []byte, a answer) error {
	if rt.statusAt == "" {
		return nil
	}
	status, ok := memberNumber(entry, rt.statusAt)
	if !ok || status < 300 {
		return nil
	}
	code := int(min(status, math.MaxInt32))
	e := &StatusError{
		StatusCode: code,
		Method:     rt.method,
		URL:        rt.display,
		Message:    rt.excerptOf(entry),
	}
	e.Throttled, e.RetryAfter = throttling(code, a.header)
	return e
}

// memberNumber returns the number in the member called name of the JSON
// object in data (the last one, if the name repeats, as encoding/json does).
// It reports false if data is not an object, has no such member, or the
// member is not a number. data must be one valid JSON value, as the entries
// of a batch response are (the decoder that split the array checked them):
// it is scanned in place, without decoding, so that looking at each entry
// costs no allocation.
func memberNumber(data []byte, name string) (float64, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	var value []byte
	for i = skipSpace(data, i+1); i < len(data) && data[i] == '"'; {
		keyEnd := stringEnd(data, i)
		if keyEnd < 0 {
			return 0, false
		}
		key := data[i:keyEnd]
		i = skipSpace(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return 0, false
		}
		i = skipSpace(data, i+1)
		end := valueEnd(data, i)
		if end < 0 {
			return 0, false
		}
		if keyIs(key, name) {
			value = data[i:end]
		}
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if len(value) == 0 || (value[0] != '-' && (value[0] < '0' || value[0] > '9')) {
		return 0, false
	}
	if len(value) <= 9 && isDigits(string(value)) { // the usual case: a plain status
		n := 0
		for _, c := range value {
			n = n*10 + int(c-'0')
		}
		return float64(n), true
	}
	// Numbers too large for a float64 parse as ±Inf with an ErrRange error.
	f, err := strconv.ParseFloat(string(value), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// keyIs reports whether the JSON string quoted (quotes included) decodes
// to name.
func keyIs(quoted []byte, name string) bool {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw) == name
	}
	var key string
	return json.Unmarshal(quoted, &key) == nil && key == name
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just after the JSON string starting at
// data[i], or -1.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index just after the JSON value starting at data[i],
// or -1.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := stringEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	// A number or a literal: up to the next delimiter.
	j := i
	for j < len(data) && strings.IndexByte(",}] \t\n\r", data[j]) < 0 {
		j++
	}
	return j
}

// excerptOf is [httpRuntime.excerpt] for a body held in memory: it looks at
// no more of it than a non-2xx answer's excerpt does.
func (rt *httpRuntime) excerptOf(body []byte) string {
	if len(body) <= excerptReadBytes {
		return rt.excerpt(string(body))
	}
	return rt.excerpt(rt.secrets.partialSuffix(string(body[:excerptReadBytes])))
}
