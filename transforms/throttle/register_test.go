package throttle

import (
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

// TestClientcallRegistered: clientcall's callers and classifier are known to
// Beam by type name, as a DoFn holding one needs on the workers.
func TestClientcallRegistered(t *testing.T) {
	for _, v := range []any{clientcall.HTTP{}, clientcall.Echo{}, clientcall.StatusClassifier{}} {
		typ := reflect.TypeOf(v)
		key, ok := runtime.TypeKey(typ)
		if !ok {
			t.Errorf("TypeKey(%v) not ok", typ)
			continue
		}
		if got, ok := runtime.LookupType(key); !ok || got != typ {
			t.Errorf("LookupType(%q) = %v, %v; want %v, true", key, got, ok, typ)
		}
	}
}
