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
// Call(context.Context, Req) (Resp, error) and returns Req and Resp.
func callerTypes(caller any) (req, resp reflect.Type, err error) {
	if caller == nil {
		return nil, nil, errors.New("caller is nil")
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

// keyFuncType checks that k has a method Key(E) string.
func checkKeyFunc(k any, elem reflect.Type) error {
	m, ok := reflect.TypeOf(k).MethodByName("Key")
	if !ok {
		return fmt.Errorf("key function %T has no method Key(%v) string", k, elem)
	}
	ft := m.Type
	if ft.NumIn() != 2 || ft.In(1) != elem || ft.NumOut() != 1 || ft.Out(0) != stringType {
		return fmt.Errorf("key function %T: Key has signature %v, want func(%v) string", k, ft, elem)
	}
	return nil
}

// PanicError is the error a call that panicked ends with. The element goes
// to the Errors output with this message.
type PanicError struct {
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("throttle: caller panicked: %v", e.Value) }

// TimeoutError is the error of a call that did not return within the
// per-call timeout. The element goes to the Errors output.
type TimeoutError struct {
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("throttle: call did not return within the %v timeout", e.Timeout)
}

// invoker calls a user's caller with payload bytes.
type invoker struct {
	fast   clientcall.Caller[[]byte, []byte]
	method reflect.Value
	req    codec
	resp   codec
}

func newInvoker(v reflect.Value, req, resp reflect.Type) *invoker {
	iv := &invoker{req: newCodec(req), resp: newCodec(resp)}
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

// guardedCall is call turning a panic into a PanicError.
func (iv *invoker) guardedCall(ctx context.Context, payload []byte) (resp []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, &PanicError{Value: r}
		}
	}()
	return iv.call(ctx, payload)
}

type callResult struct {
	resp    []byte
	err     error
	latency time.Duration
}

// safeCall runs one call with a timeout, turning a panic into a PanicError
// and a call that outlives its timeout into a TimeoutError. A timed-out
// call's goroutine is abandoned, not killed: Go cannot stop it.
func (iv *invoker) safeCall(ctx context.Context, timeout time.Duration, payload []byte) callResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	ch := make(chan callResult, 1)
	go func() {
		resp, err := iv.guardedCall(ctx, payload)
		ch <- callResult{resp: resp, err: err}
	}()
	var r callResult
	select {
	case r = <-ch:
	case <-ctx.Done():
		r = callResult{err: &TimeoutError{Timeout: timeout}}
	}
	r.latency = time.Since(start)
	return r
}
