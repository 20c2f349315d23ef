package throttle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// batch is a group's elements handed to the stateful step in one state write.
type batch struct {
	Items []item
}

// keyFn gives each element a group key and gathers elements per key into
// batches, so that the stateful step pays one state write (a Queue map entry)
// per batch instead of one per element.
type keyFn struct {
	Groups      int
	KeyFunc     userValue
	InType      beam.EncodedType
	BufferBatch int
	MaxPayload  int
	Seed        uint64
	HasSeed     bool
	Cost        userValue // WithCost's function, unless CostBytes
	CostBytes   bool      // WithByteCost: the payload's size
	Cache       bool      // WithCache: give each element a cache key, and group by it
	CachePrefix string    // begins every cache key: the caller's type and configuration, hashed
	CacheKey    userValue // WithCacheKey's function; the payload's hash if not set
	Priority    userValue // WithPriority's function; every element normal if not set

	codec   codec
	message bool // the input is Message
	key     reflect.Value
	cost    reflect.Value
	ckey    reflect.Value
	prio    reflect.Value
	rng     *rand.Rand
	buf     map[string]*batch
}

func (f *keyFn) Setup() error {
	f.codec = newCodec(f.InType.T)
	f.message = f.InType.T == messageType
	if f.KeyFunc.set() {
		v, err := f.KeyFunc.instantiate()
		if err != nil {
			return err
		}
		f.key = v.MethodByName("Key")
	}
	if f.Cost.set() {
		v, err := f.Cost.instantiate()
		if err != nil {
			return err
		}
		f.cost = v.MethodByName("Cost")
	}
	if f.Priority.set() {
		v, err := f.Priority.instantiate()
		if err != nil {
			return err
		}
		f.prio = v.MethodByName("Priority")
	}
	if f.CacheKey.set() {
		v, err := f.CacheKey.instantiate()
		if err != nil {
			return err
		}
		f.ckey = v.MethodByName("CacheKey")
	}
	if f.HasSeed {
		f.rng = rand.New(rand.NewPCG(f.Seed, 0x6b6579))
	} else {
		f.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return nil
}

func (f *keyFn) StartBundle(ctx context.Context, _ func(string, batch), _ func(Record)) {
	errorsCounter.Inc(ctx, 0) // make the metric known to the runner early (see throttleFn.report)
	f.buf = make(map[string]*batch)
}

func (f *keyFn) ProcessElement(ctx context.Context, elem beam.T, emit func(string, batch), emitErr func(Record)) {
	now := time.Now()
	var it item
	if f.message {
		it = itemOf(elem.(Message))
	} else {
		payload, err := f.codec.encode(elem)
		if err != nil {
			// Not encodable: keep a readable rendering of the element.
			emitErr(badInput(item{Payload: []byte(fmt.Sprintf("%+v", elem))}, err.Error(), now))
			errorsCounter.Inc(ctx, 1)
			return
		}
		it.Payload = payload
	}
	if f.MaxPayload > 0 && len(it.Payload) > f.MaxPayload {
		emitErr(badInput(it, fmt.Sprintf("throttle: payload of %d bytes exceeds the %d-byte limit", len(it.Payload), f.MaxPayload), now))
		errorsCounter.Inc(ctx, 1)
		return
	}
	var err error
	if f.Cache {
		it.CacheKey, err = f.cacheKeyOf(elem, it.Payload)
	}
	var k string
	if err == nil {
		k, err = f.keyOf(elem, it.CacheKey)
	}
	if err == nil {
		it.Cost, err = f.costOf(elem, it.Payload)
	}
	if err == nil && f.prio.IsValid() {
		it.Tier, err = f.tierOf(elem)
	}
	if err != nil {
		emitErr(badInput(it, err.Error(), now))
		errorsCounter.Inc(ctx, 1)
		return
	}
	b := f.buf[k]
	if b == nil {
		b = &batch{Items: make([]item, 0, min(f.BufferBatch, 64))}
		f.buf[k] = b
	}
	b.Items = append(b.Items, it)
	if len(b.Items) >= f.BufferBatch {
		emit(k, *b)
		delete(f.buf, k)
	}
}

func (f *keyFn) FinishBundle(emit func(string, batch), _ func(Record)) {
	for k, b := range f.buf {
		emit(k, *b)
	}
	f.buf = nil
}

// keyOf returns the group key of elem: the key function's, else one
// chosen by its cache key (so that elements with the same key meet in one
// group), else a random one. It recovers from a panicking key function so
// one bad element cannot fail the bundle.
func (f *keyFn) keyOf(elem any, cacheKey string) (k string, err error) {
	switch {
	case f.key.IsValid():
	case cacheKey != "":
		h := fnv.New64a()
		h.Write([]byte(cacheKey))
		return strconv.FormatUint(h.Sum64()%uint64(f.Groups), 10), nil
	default:
		return strconv.Itoa(f.rng.IntN(f.Groups)), nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("throttle: key function panicked: %v", r)
		}
	}()
	return f.key.Call([]reflect.Value{reflect.ValueOf(elem)})[0].String(), nil
}

// cacheKeyOf returns the cache key of elem (payload is its encoding): the
// prefix, then the key function's key or the payload's SHA-256. It
// recovers from a panicking key function.
func (f *keyFn) cacheKeyOf(elem any, payload []byte) (k string, err error) {
	if !f.ckey.IsValid() {
		sum := sha256.Sum256(payload)
		return f.CachePrefix + hex.EncodeToString(sum[:]), nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("throttle: cache key function panicked: %v", r)
		}
	}()
	return f.CachePrefix + f.ckey.Call([]reflect.Value{reflect.ValueOf(elem)})[0].String(), nil
}

// tierOf returns the priority tier of elem, recovering from a panicking
// priority function.
func (f *keyFn) tierOf(elem any) (tier int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("throttle: priority function panicked: %v", r)
		}
	}()
	return tierOf(int(f.prio.Call([]reflect.Value{reflect.ValueOf(elem)})[0].Int())), nil
}

// costOf returns the cost of elem (payload is its encoding), 0 for the
// default cost of 1, recovering from a panicking cost function.
func (f *keyFn) costOf(elem any, payload []byte) (c int64, err error) {
	switch {
	case f.CostBytes:
		return int64(len(payload)), nil
	case !f.cost.IsValid():
		return 0, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("throttle: cost function panicked: %v", r)
		}
	}()
	out := f.cost.Call([]reflect.Value{reflect.ValueOf(elem)})
	if !out[1].IsNil() {
		return 0, fmt.Errorf("throttle: cost: %w", out[1].Interface().(error))
	}
	c = out[0].Int()
	if c < 0 {
		return 0, fmt.Errorf("throttle: cost function returned %d, want a cost >= 0", c)
	}
	return c, nil
}

// badInput is the Errors record of an element that never reached a group.
func badInput(it item, msg string, now time.Time) Record {
	it.First = now.UnixMicro()
	return failure{Outcome: OutcomeError, Error: msg}.record(it, "", now)
}
