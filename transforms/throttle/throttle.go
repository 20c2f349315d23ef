// Package throttle is the Beam transform of beamthrottle: adaptive
// client-side throttling in front of a quota-limited API.
//
// Adaptive spreads the input over throttle groups, buffers each group in
// Beam state and, every batch interval, calls the user's caller for up to a
// batch of elements. How many it sends depends on the mode (WithMode;
// the algorithms are package adaptive's): the default, ModePaced, spaces
// the calls at a rate that follows the backend's answers and postpones the
// others to their slot; ModeSRE computes the rejection probability
// p = max(0, (requests − K·accepts) / (requests + 1)) for the group before
// each call and rejects the element locally with probability p. Every input
// element ends in exactly one of four outputs:
//
//	                       ┌─▶ Success          (caller's response)
//	input ─▶ key ─▶ buffer ┼─▶ ClientThrottled  (Record: rejected locally, no call made)
//	         (N groups)    ├─▶ ServerThrottled  (Record: HTTP 429 / RESOURCE_EXHAUSTED / 503+Retry-After)
//	                       └─▶ Errors           (Record: any other failure, panic, timeout, bad input)
//
// unless the Drop strategy discards throttled elements (counted in the
// "dropped" metric).
//
// The stateful step runs in the global window: the input is re-windowed into
// it first, because throttle state split by the user's windows would
// compute the rate per window and overshoot the quota. The outputs are in
// the global window, timestamped with the processing time of the batch that
// handled them; re-window them downstream if needed.
//
// # Metrics
//
// The transform counts what it does in Beam counters of the namespace
// "beamthrottle", which the pipeline result and the runner's UI show by
// name. Every input element ends in exactly one of accepted, cache_hits,
// client_throttled, server_throttled, errors or dropped:
//
//	requests          decisions made, retries included
//	accepted          Success elements the backend answered
//	cache_hits        Success elements answered from the response cache
//	                  (WithCache), without a call
//	cache_misses      elements the response cache did not hold
//	cache_errors      reads and writes of the response cache that failed
//	                  (the element was called for instead)
//	client_throttled  ClientThrottled elements
//	server_throttled  ServerThrottled elements
//	errors            Errors elements
//	dropped           throttled elements discarded by the Drop strategy
//	retries           throttled elements kept for another attempt
//	buffered          elements that reached a group's buffer
//	postponed         elements a firing left in the queue for a later one
//	interrupted       elements routed without a call because the pipeline was
//	                  interrupted (counted in a throttled output or dropped too)
//	recalled          elements called again: the worker that had their call
//	                  under way was gone when their group next fired
//	orphaned          calls answered that no firing collected (their bundle
//	                  failed, and the retry called their elements again)
//	calls             calls made (Call, or CallBatch for several elements)
//	cost              cost units of the calls made (WithCost; 1 per element by default)
//	call_latency_ms   a distribution: the caller's latency per call
//
// With WithPriority, per tier; every element of a tier ends in its
// accepted or its dead_lettered counter:
//
//	high_accepted         high-priority elements that ended in Success
//	                      (cache hits included)
//	high_dead_lettered    high-priority elements that ended in a throttled
//	                      or error output, or were discarded by Drop
//	high_postponed        high-priority elements a firing left in the queue
//	high_wait_ms          a distribution: how long high-priority elements
//	                      waited in their group's buffer, arriving to ending
//	normal_accepted       the same for the normal tier
//	normal_dead_lettered  and so on
//	normal_postponed      and so on
//	normal_wait_ms        and so on
//	low_accepted          the same for the low tier
//	low_dead_lettered     and so on
//	low_postponed         and so on
//	low_wait_ms           and so on
//
// With a shared quota (WithQuota), named as those of Beam's
// EnvoyRateLimiter:
//
//	ratelimit-requests-total  round trips to the quota service begun
//	ratelimit-allowed         round trips that granted every permit asked
//	ratelimit-throttled       round trips that granted fewer
//	ratelimit-rpc-errors      round trips that failed or timed out
//	ratelimit-permits         permits granted
//	ratelimit-permits-lapsed  permits unspent at the end of their window
//	ratelimit-service-down    times the service went down
//	ratelimit-failed-open     calls sent without permits, the service being down
//	ratelimit-slots-missed    slots a call got to too late to use
//	ratelimit-slots-released  slots given back to the quota unused
//
// It also adds to "throttling-msecs" in the namespace
// "beam-throttling-metrics", the counter through which Beam's Java and
// Python IOs tell Dataflow's autoscaler that time was spent throttled.
package throttle

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/typex"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/google/uuid"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

func init() {
	register.DoFn4x0[context.Context, beam.T, func(string, batch), func(Record)](&keyFn{})
	register.DoFn9x1[context.Context, state.Provider, timers.Provider, string, batch,
		func(beam.Z), func(Record), func(Record), func(Record), error](&throttleFn{})
	register.DoFn2x1[[]byte, func(beam.Y), error](&decodeFn{})
	register.Emitter2[string, batch]()
	register.Emitter1[Record]()
	register.Emitter1[[]byte]()
	register.Emitter1[beam.Y]()
	register.Emitter1[beam.Z]()
	beam.RegisterType(reflect.TypeOf((*Record)(nil)).Elem())
	beam.RegisterType(messageType)
	beam.RegisterType(replyType)
	beam.RegisterType(reflect.TypeOf((*batch)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*item)(nil)).Elem())
}

// Outputs are the four PCollections of Adaptive. Every input element is in
// exactly one of them (or dropped, with the Drop strategy).
type Outputs struct {
	// Success holds the caller's responses: PCollection<Resp>.
	Success beam.PCollection
	// ClientThrottled holds elements rejected locally without a call:
	// PCollection<Record>.
	ClientThrottled beam.PCollection
	// ServerThrottled holds elements the backend rejected as over quota:
	// PCollection<Record>.
	ServerThrottled beam.PCollection
	// Errors holds elements whose call failed for any other reason,
	// including panics and timeouts, and elements that could not be
	// processed at all: PCollection<Record>.
	Errors beam.PCollection
}

// Adaptive throttles calls to caller for the elements of in.
//
// in is a PCollection<Req> of any type with a Beam coder ([]byte, string,
// structs, ...), not a KV. caller is a value of a type registered with
// beam.RegisterType and configured by exported fields (it is serialised
// to the workers as JSON), with a method
//
//	Call(ctx context.Context, req Req) (Resp, error)
//
// that is, it implements clientcall.Caller[Req, Resp]. With WithItemsPerCall
// or WithBytesPerCall it must instead (or also) have
//
//	CallBatch(ctx context.Context, reqs []Req) ([]Resp, error)
//
// (clientcall.BatchCaller[Req, Resp]), called with several elements at
// once. If it also implements
// clientcall.Setupper or clientcall.Teardowner, those hooks run once per
// worker instance. Outputs.Success is a PCollection<Resp>; the other three
// are PCollection<Record>.
//
// in may also be a PCollection<Message>, payloads with metadata: caller
// then is a clientcall.Caller[[]byte, []byte] called with each Data,
// Outputs.Success is a PCollection<Reply>, and the Records carry the
// metadata.
//
// Usage:
//
//	caller := &clientcall.HTTP{URL: "https://api.example.com/v1/translate"}
//	out := throttle.Adaptive(s, requests, caller,
//		throttle.WithGroups(8), throttle.WithBatchSize(100))
//	textio.Write(s, "gs://bucket/ok.txt", out.Success)
//
// On Prism, run the pipeline with Beam's flag
// --experiments=prism_disable_sdf_split (pipeline.Run adds it): without it
// Prism may split a bundle, run one group in two bundles at once and lose
// buffered elements. Dataflow, Flink and Spark need nothing.
//
// Adaptive panics if the configuration is invalid; TryAdaptive returns the
// error instead.
func Adaptive(s beam.Scope, in beam.PCollection, caller any, opts ...Option) Outputs {
	out, err := TryAdaptive(s, in, caller, opts...)
	if err != nil {
		panic(err.Error())
	}
	return out
}

// TryAdaptive is Adaptive returning an error for an invalid configuration
// instead of panicking. It adds its steps under the scope
// "throttle.Adaptive", and its errors begin "throttle.Adaptive: "; an
// invalid option is an *OptionError (or several, joined with errors.Join)
// within the error, for errors.As.
func TryAdaptive(s beam.Scope, in beam.PCollection, caller any, opts ...Option) (Outputs, error) {
	out, err := tryAdaptive(s.Scope("throttle.Adaptive"), in, caller, opts...)
	if err != nil {
		return Outputs{}, fmt.Errorf("throttle.Adaptive: %w", err)
	}
	return out, nil
}

// tryAdaptive is TryAdaptive within its scope.
func tryAdaptive(s beam.Scope, in beam.PCollection, caller any, opts ...Option) (Outputs, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return Outputs{}, err
	}
	if !in.IsValid() {
		return Outputs{}, fmt.Errorf("invalid input PCollection")
	}
	if typex.IsKV(in.Type()) || typex.IsCoGBK(in.Type()) {
		return Outputs{}, fmt.Errorf("input must not be a KV or CoGBK, got %v", in.Type())
	}
	elemT := in.Type().Type()
	reqT, respT, err := callerTypes(caller, cfg.batching())
	if err != nil {
		return Outputs{}, err
	}
	message := elemT == messageType
	switch {
	case message && (reqT != bytesType || respT != bytesType):
		return Outputs{}, fmt.Errorf("caller %T takes %v and returns %v, but Message inputs need a clientcall.Caller[[]byte, []byte]", caller, reqT, respT)
	case !message && reqT != elemT:
		return Outputs{}, fmt.Errorf("caller %T takes %v but the input elements are %v", caller, reqT, elemT)
	}
	okT := respT
	if message {
		okT = replyType
	} else if respT != bytesType {
		okT = bytesType // decoded below
	}
	callerV, err := newUserValue(caller)
	if err != nil {
		return Outputs{}, err
	}
	var keyV, classV, costV userValue
	if cfg.CostBy == costFunc {
		if err := cfg.Cost.check("WithCost", elemT); err != nil {
			return Outputs{}, err
		}
		if costV, err = newUserValue(cfg.Cost.v); err != nil {
			return Outputs{}, err
		}
	}
	if cfg.KeyFunc.elem != nil {
		if err := cfg.KeyFunc.check("WithKeyFunc", elemT); err != nil {
			return Outputs{}, err
		}
		if keyV, err = newUserValue(cfg.KeyFunc.v); err != nil {
			return Outputs{}, err
		}
	}
	var cacheKeyV userValue
	if cfg.Cache && cfg.CacheKey.v != nil {
		if err := cfg.CacheKey.check("WithCacheKey", elemT); err != nil {
			return Outputs{}, err
		}
		if cacheKeyV, err = newUserValue(cfg.CacheKey.v); err != nil {
			return Outputs{}, err
		}
	}
	var priorityV userValue
	if cfg.Priority.v != nil {
		if err := cfg.Priority.check("WithPriority", elemT); err != nil {
			return Outputs{}, err
		}
		if priorityV, err = newUserValue(cfg.Priority.v); err != nil {
			return Outputs{}, err
		}
	}
	if cfg.Classifier != nil {
		if _, ok := cfg.Classifier.(clientcall.Classifier); !ok {
			return Outputs{}, fmt.Errorf("classifier %T does not implement clientcall.Classifier", cfg.Classifier)
		}
		if classV, err = newUserValue(cfg.Classifier); err != nil {
			return Outputs{}, err
		}
	}

	global := beam.WindowInto(s, window.NewGlobalWindows(), in)
	batches, badInput := beam.ParDo2(s, &keyFn{
		Groups:      cfg.Groups,
		KeyFunc:     keyV,
		InType:      beam.EncodedType{T: elemT},
		BufferBatch: cfg.BufferBatch,
		MaxPayload:  cfg.MaxPayload,
		Seed:        cfg.Seed,
		HasSeed:     cfg.HasSeed,
		Cost:        costV,
		CostBytes:   cfg.CostBy == costBytes,
		Cache:       cfg.Cache,
		CachePrefix: cachePrefix(callerV),
		CacheKey:    cacheKeyV,
		Priority:    priorityV,
	}, global)
	okBytes, ct, st, errs := beam.ParDo4(s, &throttleFn{
		Flush:      timers.InProcessingTime("flush"),
		settings:   cfg.settings,
		Caller:     callerV,
		Classifier: classV,
		ReqType:    beam.EncodedType{T: reqT},
		RespType:   beam.EncodedType{T: respT},
		ID:         uuid.NewString(),
		Messages:   message,
	}, batches, beam.TypeDefinition{Var: beam.ZType, T: okT})

	success := okBytes
	if okT == bytesType && respT != bytesType {
		success = beam.ParDo(s, &decodeFn{Type: beam.EncodedType{T: respT}}, okBytes,
			beam.TypeDefinition{Var: beam.YType, T: respT})
	}
	return Outputs{
		Success:         success,
		ClientThrottled: ct,
		ServerThrottled: st,
		Errors:          beam.Flatten(s, badInput, errs),
	}, nil
}

// decodeFn turns response payloads back into the caller's response type.
type decodeFn struct {
	Type beam.EncodedType
	c    codec
}

func (f *decodeFn) ProcessElement(b []byte, emit func(beam.Y)) error {
	if f.c.t == nil {
		f.c = newCodec(f.Type.T)
	}
	v, err := f.c.decode(b)
	if err != nil {
		return err
	}
	emit(v.Interface())
	return nil
}
