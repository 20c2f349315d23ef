package testserver

import (
	"bytes"
	"encoding/json"
)

// itemError is the answer entry for a batch item failed by
// Config.ItemErrorRate.
const itemError = `{"status":500,"error":"testserver: injected item error"}`

// parseBatch returns the items of body if it is a JSON array, a batch;
// ok is false for any other body, which is not a batch.
func parseBatch(body []byte) (items []json.RawMessage, ok bool) {
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) == 0 || b[0] != '[' {
		return nil, false
	}
	if err := json.Unmarshal(body, &items); err != nil {
		return nil, false
	}
	return items, true
}

// batchAnswer is the 200 answer to a batch: a JSON array with, for each
// item in order, the item as it came if it succeeded, or itemError if
// failed says so (failed is nil or as long as items).
func batchAnswer(items []json.RawMessage, failed []bool) []byte {
	n := 2
	for _, item := range items {
		n += len(item) + len(itemError) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if failed != nil && failed[i] {
			b = append(b, itemError...)
		} else {
			b = append(b, item...)
		}
	}
	return append(b, ']')
}
