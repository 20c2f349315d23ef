package testserver

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// costRule reads the cost of an API request as Config.CostHeader and
// Config.CostField say: the header if the request has it, else the JSON
// field, else 1. With neither configured every request, a batch too,
// costs 1.
type costRule struct {
	header string // "" = none
	field  string // "" = none
}

// cost returns the cost of a request with header h and body, which is a
// batch of items if batch is true (see parseBatch), or an error saying
// why the cost is not a non-negative integer.
//
// The header must hold a non-negative integer in decimal. The field is
// read from the top level of a JSON object body; in a batch it is summed
// over the items. A body or item that is not a JSON object, or an object
// without the field, counts 1; a field that is there must be a
// non-negative JSON integer (no fraction or exponent).
func (c costRule) cost(h http.Header, body []byte, items []json.RawMessage, batch bool) (int64, error) {
	if c.header != "" {
		if v := h.Values(c.header); len(v) > 1 {
			return 0, fmt.Errorf("cost header %s given %d times", c.header, len(v))
		} else if len(v) == 1 {
			n, ok := parseCost(v[0])
			if !ok {
				return 0, fmt.Errorf("cost header %s: %q is not a non-negative integer", c.header, v[0])
			}
			return n, nil
		}
	}
	if c.field == "" {
		return 1, nil
	}
	if !batch {
		n, err := c.fieldCost(body)
		if err != nil {
			return 0, fmt.Errorf("cost field %q: %v", c.field, err)
		}
		return n, nil
	}
	var sum int64
	for i, item := range items {
		n, err := c.fieldCost(item)
		if err != nil {
			return 0, fmt.Errorf("item %d: cost field %q: %v", i, c.field, err)
		}
		if n > math.MaxInt64-sum {
			return 0, fmt.Errorf("cost field %q: the items' costs add up to more than %d", c.field, int64(math.MaxInt64))
		}
		sum += n
	}
	return sum, nil
}

// fieldCost returns the cost field of the JSON value v: its value if v is
// an object with the field, else 1.
func (c costRule) fieldCost(v []byte) (int64, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
		return 1, nil // not an object
	}
	raw, ok := obj[c.field]
	if !ok {
		return 1, nil
	}
	n, ok := parseCost(string(raw))
	if !ok {
		return 0, fmt.Errorf("%s is not a non-negative integer", raw)
	}
	return n, nil
}

// parseCost parses a non-negative decimal integer of digits only (no sign,
// space, fraction or exponent) that fits in int64.
func parseCost(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
