package throttle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf(batch{}), encodeBatch, decodeBatch)
}

// item is one buffered element with its retry bookkeeping.
type item struct {
	Payload   []byte
	Attempts  int
	First     int64 // unix micros of the first attempt
	NotBefore int64 // unix nanos before which it is not retried
	Since     int64 // unix nanos, by the throttle's clock, when it joined its group's queue (MaxWait counts from it)
	// Last is why its last attempt failed (zero Outcome if none), kept for
	// the record of an element that later runs out of retries or waits too
	// long.
	Last failure
	// The metadata of a Message input, carried unchanged (zero for other
	// inputs); Prior is its Attempts.
	MessageID, AckID string
	Attributes       map[string]string
	Prior            int
	// Cost is what a call for it is charged against the pacer and the
	// shared quota (WithCost), in cost units; 0 means 1 (see cost).
	Cost int64
	// CacheKey is its key in the response cache (WithCache), empty without
	// one.
	CacheKey string
	// Tier is its priority tier (WithPriority): tierLow, tierNormal (also
	// without WithPriority) or tierHigh.
	Tier int
}

// cost is the cost of it in cost units: at least 1.
func (it *item) cost() int64 { return max(it.Cost, 1) }

// message is the Message it came from (its payload as Data).
func (it *item) message() Message {
	return Message{Data: it.Payload, MessageID: it.MessageID, AckID: it.AckID, Attributes: it.Attributes, Attempts: it.Prior}
}

// itemOf is the item of a Message input.
func itemOf(m Message) item {
	return item{Payload: m.Data, MessageID: m.MessageID, AckID: m.AckID, Attributes: m.Attributes, Prior: m.Attempts}
}

// batchVersion is the first byte of an encoded batch. A batch is both the
// element of the keyed PCollection and the value of the queue's map state,
// which a runner persists (Dataflow), so its encoding is versioned: a
// change of layout gets a new version, and decodeBatch keeps reading the
// old ones. Version 1 had no Message metadata, version 2 no cost, version
// 3 no cache key, version 4 no priority tier (read as normal).
const batchVersion = 5

// encodeBatch is the coder of batch: the version, the item count, then per
// item its payload (length-prefixed), its counters as varints and its last
// failure, if any, its Message metadata, if any, its cost (0 for the
// default cost of 1), its cache key (empty without a cache) and its
// priority tier. Payloads are copied once, unchanged.
func encodeBatch(b batch) ([]byte, error) {
	size := 1 + binary.MaxVarintLen64
	for i := range b.Items {
		size += len(b.Items[i].Payload) + len(b.Items[i].CacheKey) + 7*binary.MaxVarintLen64 + 2
	}
	out := make([]byte, 0, size)
	out = append(out, batchVersion)
	out = binary.AppendUvarint(out, uint64(len(b.Items)))
	for i := range b.Items {
		it := &b.Items[i]
		out = binary.AppendUvarint(out, uint64(len(it.Payload)))
		out = append(out, it.Payload...)
		out = binary.AppendVarint(out, int64(it.Attempts))
		out = binary.AppendVarint(out, it.First)
		out = binary.AppendVarint(out, it.NotBefore)
		out = binary.AppendVarint(out, it.Since)
		if it.Last.Outcome == "" {
			out = append(out, 0)
		} else {
			out = append(out, 1)
			out = appendString(out, string(it.Last.Outcome))
			out = appendString(out, it.Last.Error)
			out = binary.AppendVarint(out, int64(it.Last.Status))
			out = binary.AppendVarint(out, int64(it.Last.GRPC))
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(it.Last.Prob))
			out = binary.AppendVarint(out, it.Last.RetryAfter)
		}
		if it.MessageID == "" && it.AckID == "" && it.Attributes == nil && it.Prior == 0 {
			out = append(out, 0)
		} else {
			out = append(out, 1)
			out = appendString(out, it.MessageID)
			out = appendString(out, it.AckID)
			out = binary.AppendVarint(out, int64(it.Prior))
			out = binary.AppendUvarint(out, uint64(len(it.Attributes)))
			for _, k := range slices.Sorted(maps.Keys(it.Attributes)) { // sorted: the same batch, the same bytes
				out = appendString(appendString(out, k), it.Attributes[k])
			}
		}
		out = binary.AppendVarint(out, it.Cost)
		out = appendString(out, it.CacheKey)
		out = binary.AppendVarint(out, int64(it.Tier))
	}
	return out, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// errBatch is the error of a batch encoding that cannot be read.
var errBatch = errors.New("throttle: malformed batch encoding")

// decodeBatch reads what encodeBatch wrote. Payloads share data's memory
// (Beam hands each decode a buffer of its own).
func decodeBatch(data []byte) (batch, error) {
	if len(data) == 0 {
		return batch{}, errBatch
	}
	version := data[0]
	if version < 1 || version > batchVersion {
		return batch{}, fmt.Errorf("throttle: unknown batch encoding version %d", data[0])
	}
	r := batchReader{b: data[1:]}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) { // each item takes at least one byte
		return batch{}, errBatch
	}
	items := make([]item, n)
	for i := range items {
		it := &items[i]
		it.Payload = r.bytes()
		it.Attempts = int(r.varint())
		it.First = r.varint()
		it.NotBefore = r.varint()
		it.Since = r.varint()
		if r.byte() == 1 {
			it.Last.Outcome = Outcome(r.bytes())
			it.Last.Error = string(r.bytes())
			it.Last.Status = int(r.varint())
			it.Last.GRPC = int(r.varint())
			it.Last.Prob = math.Float64frombits(r.uint64())
			it.Last.RetryAfter = r.varint()
		}
		if version >= 2 && r.byte() == 1 {
			r.readMessage(it)
		}
		if version >= 3 {
			it.Cost = r.varint()
		}
		if version >= 4 {
			it.CacheKey = string(r.bytes())
		}
		if version >= 5 {
			it.Tier = int(r.varint())
			if it.Tier < tierLow || it.Tier > tierHigh {
				r.fail()
			}
		}
		if r.err != nil {
			return batch{}, r.err
		}
	}
	if len(r.b) != 0 {
		return batch{}, errBatch
	}
	return batch{Items: items}, nil
}

// readMessage reads an item's Message metadata.
func (r *batchReader) readMessage(it *item) {
	it.MessageID = string(r.bytes())
	it.AckID = string(r.bytes())
	it.Prior = int(r.varint())
	n := r.uvarint()
	if n > uint64(len(r.b)) { // each attribute takes at least two bytes
		r.fail()
		return
	}
	it.Attributes = make(map[string]string, n)
	for range n {
		k := string(r.bytes())
		it.Attributes[k] = string(r.bytes())
	}
}

// batchReader reads the fields of an encoded batch; the first error sticks.
type batchReader struct {
	b   []byte
	err error
}

func (r *batchReader) fail() { r.err, r.b = errBatch, nil }

func (r *batchReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *batchReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *batchReader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *batchReader) uint64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// bytes returns the next length-prefixed bytes, sharing r's memory.
func (r *batchReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// The priority tiers of WithPriority, highest last.
const (
	tierLow    = -1
	tierNormal = 0
	tierHigh   = 1
)

// tierOf is the tier of a priority function's value p.
func tierOf(p int) int { return min(max(p, tierLow), tierHigh) }
