package throttle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
)

var (
	contextType = reflect.TypeOf((*context.Context)(nil)).Elem()
	errorType   = reflect.TypeOf((*error)(nil)).Elem()
)

// userValue is a user-supplied value (caller, key function, classifier) in a
// form Beam can serialise into a DoFn: its registered type and its JSON.
type userValue struct {
	Type *beam.EncodedType `json:",omitempty"`
	JSON string            `json:",omitempty"`
}

func newUserValue(v any) (userValue, error) {
	if v == nil {
		return userValue{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return userValue{}, fmt.Errorf("%T cannot be serialised as JSON: %w", v, err)
	}
	return userValue{Type: &beam.EncodedType{T: reflect.TypeOf(v)}, JSON: string(b)}, nil
}

func (u userValue) set() bool { return u.Type != nil && u.Type.T != nil }

// instantiate rebuilds the value on a worker.
func (u userValue) instantiate() (reflect.Value, error) {
	if !u.set() {
		return reflect.Value{}, errors.New("throttle: no value")
	}
	t := u.Type.T
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := json.Unmarshal([]byte(u.JSON), p.Interface()); err != nil {
			return reflect.Value{}, fmt.Errorf("throttle: rebuild %v: %w", t, err)
		}
		return p, nil
	}
	p := reflect.New(t)
	if err := json.Unmarshal([]byte(u.JSON), p.Interface()); err != nil {
		return reflect.Value{}, fmt.Errorf("throttle: rebuild %v: %w", t, err)
	}
	return p.Elem(), nil
}

// callerTypes checks that caller has a method
// Call(context.Context, Req) (Resp, error), or, when batching, a method
// CallBatch(context.Context, []Req) ([]Resp, error), and returns Req and
// Resp.
func callerTypes(caller any, batching bool) (req, resp reflect.Type, err error) {
	if caller == nil {
		return nil, nil, errors.New("caller is nil")
	}
	if batching {
		m, ok := reflect.TypeOf(caller).MethodByName("CallBatch")
		if !ok {
			return nil, nil, fmt.Errorf("caller %T has no method CallBatch(context.Context, []Req) ([]Resp, error), which WithItemsPerCall and WithBytesPerCall need", caller)
		}
		ft := m.Type // includes the receiver
		if ft.NumIn() != 3 || ft.In(1) != contextType || ft.In(2).Kind() != reflect.Slice ||
			ft.NumOut() != 2 || ft.Out(0).Kind() != reflect.Slice || ft.Out(1) != errorType {
			return nil, nil, fmt.Errorf("caller %T: CallBatch has signature %v, want func(context.Context, []Req) ([]Resp, error)", caller, ft)
		}
		return ft.In(2).Elem(), ft.Out(0).Elem(), nil
	}
	m, ok := reflect.TypeOf(caller).MethodByName("Call")
	if !ok {
		return nil, nil, fmt.Errorf("caller %T has no method Call(context.Context, Req) (Resp, error)", caller)
	}
	ft := m.Type // includes the receiver
	if ft.NumIn() != 3 || ft.In(1) != contextType || ft.NumOut() != 2 || ft.Out(1) != errorType {
		return nil, nil, fmt.Errorf("caller %T: Call has signature %v, want func(context.Context, Req) (Resp, error)", caller, ft)
	}
	return ft.In(2), ft.Out(0), nil
}

// panicError is the error a call that panicked ends with. The element goes
// to the Errors output with this message.
type panicError struct {
	Value any
}

func (e *panicError) Error() string { return fmt.Sprintf("throttle: caller panicked: %v", e.Value) }

// timeoutError is the error of a call that did not return within the
// per-call timeout. The element goes to the Errors output.
type timeoutError struct {
	Timeout time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("throttle: call did not return within the %v timeout", e.Timeout)
}

// invoker calls a user's caller with payload bytes: Call with one element,
// or, when the transform batches (WithItemsPerCall, WithBytesPerCall),
// CallBatch with the elements of one call.
type invoker struct {
	fast      clientcall.Caller[[]byte, []byte]
	fastBatch clientcall.BatchCaller[[]byte, []byte]
	method    reflect.Value // Call, or CallBatch when batching
	batching  bool
	req       codec
	resp      codec
}

func newInvoker(v reflect.Value, req, resp reflect.Type, batching bool) *invoker {
	iv := &invoker{req: newCodec(req), resp: newCodec(resp), batching: batching}
	if batching {
		if c, ok := v.Interface().(clientcall.BatchCaller[[]byte, []byte]); ok {
			iv.fastBatch = c
			return iv
		}
		iv.method = v.MethodByName("CallBatch")
		return iv
	}
	if c, ok := v.Interface().(clientcall.Caller[[]byte, []byte]); ok {
		iv.fast = c
		return iv
	}
	iv.method = v.MethodByName("Call")
	return iv
}

func (iv *invoker) call(ctx context.Context, payload []byte) ([]byte, error) {
	if iv.fast != nil {
		return iv.fast.Call(ctx, payload)
	}
	req, err := iv.req.decode(payload)
	if err != nil {
		return nil, err
	}
	out := iv.method.Call([]reflect.Value{reflect.ValueOf(ctx), req})
	if e := out[1].Interface(); e != nil {
		return nil, e.(error)
	}
	return iv.resp.encode(out[0].Interface())
}

// callBatch makes one CallBatch for the payloads of items and returns one
// response and one error per item (clientcall.SplitBatch). An item whose
// payload cannot be decoded into the caller's request type fails alone and
// is left out of the call.
func (iv *invoker) callBatch(ctx context.Context, items []item) ([][]byte, []error) {
	n := len(items)
	if iv.fastBatch != nil {
		payloads := make([][]byte, n)
		for i := range items {
			payloads[i] = items[i].Payload
		}
		resps, err := iv.fastBatch.CallBatch(ctx, payloads)
		return clientcall.SplitBatch(n, resps, err)
	}
	resps, errs := make([][]byte, n), make([]error, n)
	reqs := reflect.MakeSlice(reflect.SliceOf(iv.req.t), 0, n)
	var sent []int // the items in reqs, by index
	for i := range items {
		req, err := iv.req.decode(items[i].Payload)
		if err != nil {
			errs[i] = err
			continue
		}
		reqs = reflect.Append(reqs, req)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return resps, errs
	}
	out := iv.method.Call([]reflect.Value{reflect.ValueOf(ctx), reqs})
	var err error
	if e := out[1].Interface(); e != nil {
		err = e.(error)
	}
	got := make([][]byte, out[0].Len())
	encErrs := make([]error, len(got))
	for k := range got {
		got[k], encErrs[k] = iv.resp.encode(out[0].Index(k).Interface())
	}
	gotResps, gotErrs := clientcall.SplitBatch(len(sent), got, err)
	for k, i := range sent {
		resps[i], errs[i] = gotResps[k], gotErrs[k]
		if errs[i] == nil && k < len(encErrs) {
			errs[i] = encErrs[k]
		}
	}
	return resps, errs
}

// invoke makes the call of items: Call for its one element, or CallBatch,
// turning a panic into a panicError for every item.
func (iv *invoker) invoke(ctx context.Context, items []item) (r callResult) {
	defer func() {
		if p := recover(); p != nil {
			r = callResult{err: &panicError{Value: p}}
		}
	}()
	if iv.batching {
		r.resps, r.errs = iv.callBatch(ctx, items)
		return r
	}
	r.resp, r.err = iv.call(ctx, items[0].Payload)
	return r
}

// callResult is what became of one call: resp and err for one element (or
// err for every element of a batch that failed as a whole: a panic or a
// timeout), or, for a batched call, resps and errs, one per element.
type callResult struct {
	resp    []byte
	err     error
	resps   [][]byte
	errs    []error
	latency time.Duration
	quota   []adaptive.Quota // the limits the answer advertised
}

// failed reports whether an element of the call failed.
func (r *callResult) failed() bool {
	if r.err != nil {
		return true
	}
	for _, err := range r.errs {
		if err != nil {
			return true
		}
	}
	return false
}

// of returns the response and error of the k-th element of the call.
func (r *callResult) of(k int) ([]byte, error) {
	if r.errs == nil {
		return r.resp, r.err
	}
	return r.resps[k], r.errs[k]
}
