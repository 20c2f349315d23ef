package pipeline

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*JSONPriority)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*AttrPriority)(nil)).Elem())
}

// parsePriority parses the --priority flag into the transform's option:
// "" (every element normal: nil), "json:FIELD" (JSONPriority) or
// "attr:NAME" (AttrPriority). Its error names the flag.
func parsePriority(s string) (throttle.Option, error) {
	if s == "" {
		return nil, nil
	}
	if field, ok := strings.CutPrefix(s, "json:"); ok && field != "" {
		return throttle.WithPriority(JSONPriority{Field: field}), nil
	}
	if name, ok := strings.CutPrefix(s, "attr:"); ok && name != "" {
		return throttle.WithPriority(AttrPriority{Name: name}), nil
	}
	return nil, fmt.Errorf("--priority: want json:FIELD or attr:NAME, got %q", s)
}

// JSONPriority reads an element's priority tier from a top-level field of
// its JSON payload: "high", "normal" or "low" (any case), or a number (above
// 0 high, 0 normal, below 0 low). A payload without the field, or with
// another value, is normal.
type JSONPriority struct {
	Field string
}

// Priority returns the tier in m's payload: 1 high, 0 normal, -1 low.
func (p JSONPriority) Priority(m Element) int {
	var obj map[string]json.RawMessage
	if json.Unmarshal(m.Data, &obj) != nil {
		return 0
	}
	raw, ok := obj[p.Field]
	if !ok {
		return 0
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return tierOf(s)
	}
	return tierOf(string(raw))
}

// AttrPriority reads an element's priority tier from an attribute of its
// Pub/Sub message: "high", "normal" or "low" (any
// case), or a number (above 0 high, 0 normal, below 0 low). An element
// without the attribute, or with another value, is normal.
type AttrPriority struct {
	Name string
}

// Priority returns the tier in m's attribute: 1 high, 0 normal, -1 low.
func (p AttrPriority) Priority(m Element) int { return tierOf(m.Attributes[p.Name]) }

// tierOf is the tier a value names: 1 high, 0 normal, -1 low.
func tierOf(v string) int {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "high":
		return 1
	case "low":
		return -1
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	switch {
	case err != nil || f == 0:
		return 0
	case f > 0:
		return 1
	}
	return -1
}
