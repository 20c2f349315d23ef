package throttle

import (
	"encoding/json"
	"fmt"
	"reflect"
)

var (
	bytesType   = reflect.TypeOf([]byte(nil))
	stringType  = reflect.TypeOf("")
	messageType = reflect.TypeOf(Message{})
	replyType   = reflect.TypeOf(Reply{})
)

// codec turns elements of one type into payload bytes and back: []byte as
// is, string as its UTF-8 bytes, anything else as JSON. Payloads are what the
// stateful step buffers and what failure records carry, so a dead-letter
// sink can publish the original bytes unchanged.
type codec struct {
	t reflect.Type
}

func newCodec(t reflect.Type) codec { return codec{t: t} }

func (c codec) encode(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("throttle: encode %v element as JSON: %w", c.t, err)
	}
	return b, nil
}

// decode returns a reflect.Value of type c.t.
func (c codec) decode(b []byte) (reflect.Value, error) {
	switch c.t {
	case bytesType:
		return reflect.ValueOf(b), nil
	case stringType:
		return reflect.ValueOf(string(b)), nil
	}
	p := reflect.New(c.t)
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		return reflect.Value{}, fmt.Errorf("throttle: decode %v element from JSON: %w", c.t, err)
	}
	return p.Elem(), nil
}
