package throttle

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/coder"
)

// TestQueueMetaRow pins the encoding of a group's bookkeeping, which Beam
// encodes as a schema row: a row of another shape cannot be read by the
// workers of a job updated in place. If this fails on purpose, say which
// builds can no longer be updated in place in docs/operations.md
// ("Upgrading a running job"), then record the new encoding here.
func TestQueueMetaRow(t *testing.T) {
	const want = "0600010203040500000001030003612d31063fe0000000000000"
	meta := queueMeta{Head: 1, Tail: 2, Size: 3, Armed: 4, Skew: 5, Flying: []flyingCall{{ID: "a-1", Sent: 6, Prob: 0.5}}}
	enc, err := coder.RowEncoderForStruct(reflect.TypeOf(meta))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := enc(meta, &buf); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(buf.Bytes()); got != want {
		t.Errorf("queueMeta's row encoding changed: got %s, want %s", got, want)
	}
	dec, err := coder.RowDecoderForStruct(reflect.TypeOf(meta))
	if err != nil {
		t.Fatal(err)
	}
	back, err := dec(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, meta) {
		t.Errorf("decoded %+v, want %+v", back, meta)
	}
}
