package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*registeredCaller)(nil)).Elem())
	RegisterCaller("http", func(o CallerOptions) (clientcall.Caller[[]byte, []byte], error) {
		return o.HTTP(), nil
	})
	RegisterCaller("echo", func(CallerOptions) (clientcall.Caller[[]byte, []byte], error) {
		return clientcall.Echo{}, nil
	})
}

// Element is what flows through the pipeline's throttle: the payload handed
// to the caller unchanged (Data), plus where it came from: the Pub/Sub
// message ID and ack ID when it was read from a subscription, the attempts
// of earlier runs and the attributes of a reprocessed dead-letter message
// (kept so a message parked again keeps them all). The throttle carries
// them beside the payload as they are.
type Element = throttle.Message

// Result is the Success element of the pipeline: the input and the
// caller's response.
type Result = throttle.Reply

// CallerOptions configure the callers the pipeline can build by name.
type CallerOptions struct {
	URL         string
	Method      string
	ContentType string
	Headers     map[string]string // values never logged
	HeaderEnv   map[string]string // header name → environment variable
	Timeout     time.Duration     // 0: the pipeline's --call_timeout
	MaxResponse int64
	// ItemStatusField is the http caller's clientcall.HTTP.ItemStatusField:
	// the member of a batch answer's entry that holds its item's status.
	ItemStatusField string
}

// HTTP returns the HTTP caller these options describe.
func (o CallerOptions) HTTP() *clientcall.HTTP {
	return &clientcall.HTTP{
		URL:              o.URL,
		Method:           o.Method,
		ContentType:      o.ContentType,
		Headers:          o.Headers,
		HeaderEnv:        o.HeaderEnv,
		Timeout:          o.Timeout,
		MaxResponseBytes: o.MaxResponse,
		ItemStatusField:  o.ItemStatusField,
	}
}

// CallerFactory builds a caller on a worker from the pipeline's caller
// options. It runs once per DoFn instance (in Setup).
type CallerFactory func(CallerOptions) (clientcall.Caller[[]byte, []byte], error)

var (
	callersMu sync.RWMutex
	callers   = map[string]CallerFactory{}
)

// RegisterCaller makes a caller available to the --caller flag under name.
// Call it from an init function of the binary that runs the pipeline, so it
// is registered on the workers too:
//
//	func init() {
//		pipeline.RegisterCaller("dlp", func(o pipeline.CallerOptions) (clientcall.Caller[[]byte, []byte], error) {
//			return &dlpCaller{Project: os.Getenv("DLP_PROJECT")}, nil
//		})
//	}
func RegisterCaller(name string, f CallerFactory) {
	callersMu.Lock()
	defer callersMu.Unlock()
	callers[name] = f
}

// Callers lists the registered caller names.
func Callers() []string {
	callersMu.RLock()
	defer callersMu.RUnlock()
	names := make([]string, 0, len(callers))
	for n := range callers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupCaller(name string) (CallerFactory, bool) {
	callersMu.RLock()
	defer callersMu.RUnlock()
	f, ok := callers[name]
	return f, ok
}

// registeredCaller is the caller registered as Name, built on the worker
// from Options once per DoFn instance (in Setup). It tells the run's
// Monitor (ID Monitor) how each call went.
type registeredCaller struct {
	Name    string
	Options CallerOptions
	Monitor string

	inner clientcall.Caller[[]byte, []byte]
	m     Monitor
}

// newRegisteredCaller returns the caller registered as name, failing at
// construction if there is none.
func newRegisteredCaller(name string, o CallerOptions) (*registeredCaller, error) {
	if _, ok := lookupCaller(name); !ok {
		return nil, fmt.Errorf("--caller: no caller registered as %q (registered: %v)", name, Callers())
	}
	return &registeredCaller{Name: name, Options: o}, nil
}

func (c *registeredCaller) Setup(ctx context.Context) error {
	f, ok := lookupCaller(c.Name)
	if !ok {
		return fmt.Errorf("pipeline: no caller registered as %q (registered: %v)", c.Name, Callers())
	}
	inner, err := f(c.Options)
	if err != nil {
		return fmt.Errorf("pipeline: build caller %q: %w", c.Name, err)
	}
	if s, ok := inner.(clientcall.Setupper); ok {
		if err := s.Setup(ctx); err != nil {
			return err
		}
	}
	c.inner = inner
	c.m = lookupMonitor(c.Monitor)
	return nil
}

func (c *registeredCaller) Teardown(ctx context.Context) error {
	if t, ok := c.inner.(clientcall.Teardowner); ok {
		return t.Teardown(ctx)
	}
	return nil
}

// Call sends the payload to the caller built in Setup (which the throttle
// runs before any call).
func (c *registeredCaller) Call(ctx context.Context, payload []byte) ([]byte, error) {
	resp, err := c.inner.Call(ctx, payload)
	c.m.Called(time.Now(), err)
	return resp, err
}

// CallBatch sends the payloads in one call of the caller built in Setup,
// which checkBatch found to have a batch form.
func (c *registeredCaller) CallBatch(ctx context.Context, payloads [][]byte) ([][]byte, error) {
	b, ok := c.inner.(clientcall.BatchCaller[[]byte, []byte])
	if !ok {
		return nil, fmt.Errorf("pipeline: caller %q has no batch form (CallBatch)", c.Name)
	}
	resp, err := b.CallBatch(ctx, payloads)
	c.m.Called(time.Now(), err)
	return resp, err
}

// checkBatch reports, naming the flag, whether the caller registered as
// c.Name has a batch form (clientcall.BatchCaller), building one here to
// see; it is not set up.
func (c *registeredCaller) checkBatch() error {
	f, _ := lookupCaller(c.Name)
	inner, err := f(c.Options)
	if err != nil {
		return fmt.Errorf("--caller: build caller %q: %w", c.Name, err)
	}
	if _, ok := inner.(clientcall.BatchCaller[[]byte, []byte]); !ok {
		return fmt.Errorf("--items_per_call: caller %q has no batch form (a CallBatch method, clientcall.BatchCaller): use --items_per_call=1 and no --bytes_per_call", c.Name)
	}
	return nil
}
