package throttle

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamthrottle/beamthrottle/clientcall"
)

// The callers and classifier of package clientcall are registered here, in
// the Beam glue, so that clientcall itself does not import Beam: a DoFn
// holding one of them is serialised and rebuilt on the workers by type name.
func init() {
	beam.RegisterType(reflect.TypeOf((*clientcall.HTTP)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*clientcall.Echo)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*clientcall.StatusClassifier)(nil)).Elem())
}
