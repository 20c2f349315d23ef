package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*JSONCost)(nil)).Elem())
}

// parseCost parses the --cost flag into the transform's option: "" or "1"
// (every element costs 1: nil, the transform's default), "bytes"
// (throttle.WithByteCost), "call" (throttle.WithCallCost) or "json:FIELD"
// (throttle.WithCost with a JSONCost). Its error names the flag.
func parseCost(s string) (throttle.Option, error) {
	switch s {
	case "", "1":
		return nil, nil
	case "bytes":
		return throttle.WithByteCost(), nil
	case "call":
		return throttle.WithCallCost(), nil
	}
	if field, ok := strings.CutPrefix(s, "json:"); ok && field != "" {
		return throttle.WithCost(JSONCost{Field: field}), nil
	}
	return nil, fmt.Errorf("--cost: want 1, bytes, call or json:FIELD, got %q", s)
}

// JSONCost charges an element the integer in a top-level field of its JSON
// payload, such as the tokens an LLM request will use. A payload that is
// not a JSON object, or whose field is missing or not an integer >= 0, goes
// to the errors output with its payload.
type JSONCost struct {
	Field string
}

// Cost returns the value of the field in m's payload.
func (c JSONCost) Cost(m Element) (int, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(m.Data, &obj); err != nil {
		return 0, fmt.Errorf("payload is not a JSON object, so it has no %q field", c.Field)
	}
	raw, ok := obj[c.Field]
	if !ok {
		return 0, fmt.Errorf("payload has no %q field", c.Field)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var n json.Number
	if err := d.Decode(&n); err != nil {
		return 0, fmt.Errorf("field %q is %s, not an integer", c.Field, raw)
	}
	v, err := n.Int64()
	if err != nil || v < 0 || v > 1<<31-1 {
		return 0, fmt.Errorf("field %q is %s, not an integer in [0, 2147483647]", c.Field, raw)
	}
	return int(v), nil
}
