package adaptive

import (
	"encoding/binary"
	"math"
)

// pacerVersion is the version byte of the Pacer's state encoding: the high
// nibble is the policy (2, the pacer), the low one the version. Version 5
// added the recent answers and refusals at a slow API's steady ceiling and
// the send time of the latest request accepted (a Pacer of version 4 reads
// with none counted and none accepted); version 4 added the latency and the
// probes under way (a Pacer of version 3 reads with neither known);
// version 3 added the unit, and later the steady flag
// (a Pacer saved before it reads as not steady); the state of version 2
// (pacerVersion2), saved when every request cost 1, is read with the unit
// not known yet (0), and its rates as cost units per second.
const (
	pacerVersion  = 0x25
	pacerVersion4 = 0x24
	pacerVersion3 = 0x23
	pacerVersion2 = 0x22
)

// probeGain shapes the cubic curve above the ceiling: Recover after
// reaching it the rate is (1 + probeGain) × the ceiling.
var probeGain = 0.3

// pacerWords is the number of 8-byte words of the Pacer's state; version 4
// had three fewer (the answers, the refusals and the latest accepted send,
// which come last), version 3 five (the latency and the probes too),
// version 2 six (the unit too).
const pacerWords = 19

// pacerFlags are the bits of the flags byte: started, dark, steady, a
// request sent since the last decrease accepted (a state saved before it
// reads as none), and the ceiling a rate the backend accepted (from
// version 5).
const pacerFlags = 1 | 2 | 4 | 8 | 16

// MarshalBinary encodes the Pacer's state, versioned.
func (p *Pacer) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 2+8*pacerWords)
	b = append(b, pacerVersion)
	var flags byte
	if p.started {
		flags |= 1
	}
	if p.dark {
		flags |= 2
	}
	if p.steady {
		flags |= 4
	}
	if p.okCut {
		flags |= 8
	}
	if p.okCeil {
		flags |= 16
	}
	b = append(b, flags)
	for _, f := range []float64{p.rate, p.ceil, p.spell} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	for _, v := range []int64{p.epoch, p.next, p.last, p.blocked, p.cutAt, p.cuts, p.held, p.asked, p.out, p.sent} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.unit))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.lat))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.probes))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.answers))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.refused))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.okSent))
	return b, nil
}

// UnmarshalBinary restores state made by MarshalBinary, of this version or
// of the one before costs (whose unit is not known yet: it behaves as 1
// until a request with a cost sets it). Empty data resets the Pacer; data
// of another version or shape is refused with ErrState and leaves the
// Pacer reset.
func (p *Pacer) UnmarshalBinary(data []byte) error {
	cfg := p.cfg
	*p = Pacer{cfg: cfg}
	if len(data) == 0 {
		return nil
	}
	switch {
	case len(data) == 2+8*pacerWords && data[0] == pacerVersion:
	case len(data) == 2+8*(pacerWords-3) && data[0] == pacerVersion4:
	case len(data) == 2+8*(pacerWords-5) && data[0] == pacerVersion3:
	case len(data) == 2+8*(pacerWords-6) && data[0] == pacerVersion2:
	default:
		return ErrState
	}
	if data[1]&^pacerFlags != 0 || data[0] != pacerVersion && data[1]&16 != 0 {
		return ErrState
	}
	q := Pacer{cfg: cfg, started: data[1]&1 != 0, dark: data[1]&2 != 0, steady: data[1]&4 != 0, okCut: data[1]&8 != 0, okCeil: data[1]&16 != 0}
	d := data[2:]
	f := func() float64 { v := math.Float64frombits(binary.LittleEndian.Uint64(d)); d = d[8:]; return v }
	i := func() int64 { v := int64(binary.LittleEndian.Uint64(d)); d = d[8:]; return v }
	q.rate, q.ceil, q.spell = f(), f(), f()
	q.epoch, q.next, q.last, q.blocked, q.cutAt, q.cuts, q.held, q.asked, q.out, q.sent = i(), i(), i(), i(), i(), i(), i(), i(), i(), i()
	if len(d) > 0 {
		q.unit = f()
	}
	if len(d) > 0 {
		q.lat, q.probes = i(), i()
	}
	if len(d) > 0 {
		q.answers, q.refused, q.okSent = i(), i(), i()
	}
	// A unit is 0 (not known yet) or an average of costs of at least 1.
	if !(q.unit == 0 || q.unit >= 1 && q.unit <= maxUnit) {
		return ErrState
	}
	for _, v := range []float64{q.rate, q.ceil, q.spell} {
		if math.IsNaN(v) || v < 0 || v > maxRate {
			return ErrState
		}
	}
	if q.started && !(q.rate > 0) || q.cuts < 0 || q.held < 0 || q.asked < q.held || q.out < 0 || q.lat < 0 || q.probes < 0 ||
		q.refused < 0 || q.answers < q.refused {
		return ErrState
	}
	// The sends of a Pacer restored after it started are not known: its
	// limits' AdvertisedRates learn of those sent from now on.
	q.early.done = q.started
	*p = q
	return nil
}
