package throttle_test

import (
	"errors"
	"fmt"

	"github.com/beamthrottle/beamthrottle/transforms/adaptive"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// Check options before building a pipeline, and tell which option is at
// fault: each fault is an *OptionError, the algorithm's settings' too.
// Every fault is reported, whatever the order of the options.
func ExampleValidateOptions() {
	err := throttle.ValidateOptions(throttle.WithSRE(adaptive.SREConfig{K: -1}), throttle.WithBatchSize(0),
		throttle.WithMode("fast"))
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var oe *throttle.OptionError
		if errors.As(e, &oe) {
			fmt.Printf("option %s %s: %v\n", oe.Option, oe.Field, oe.Err)
		}
	}
	// Output:
	// option WithMode : must be sre or paced, got "fast"
	// option WithBatchSize : must be >= 1, got 0
	// option WithSRE K: must be positive and finite, got -1
}
