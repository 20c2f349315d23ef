package pubsubio_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
)

func ExampleValidate() {
	for _, m := range []pubsubio.Message{
		{Data: []byte("ok"), Attributes: map[string]string{"source": "throttle"}},
		{},
		{Data: make([]byte, pubsubio.MaxMessageBytes)},
		{Attributes: map[string]string{"k": strings.Repeat("v", 2000)}},
	} {
		err := pubsubio.Validate(m)
		fmt.Println(err == nil, errors.Is(err, pubsubio.ErrTooLarge), err)
	}
	// Output:
	// true false <nil>
	// false false pubsubio: message has no data and no attributes
	// false true pubsubio: message too large: 10000005 encoded bytes (10000000 of data, 0 attributes), limit 9999690
	// false false pubsubio: attribute too long: value of key "k" is 2000 bytes, limit 1024
}

// Replay a dead-letter subscription into a topic: read until the
// subscription has been empty for 30 seconds, publish, and keep what Pub/Sub
// would refuse.
func Example_replay() {
	p, s := beam.NewPipelineWithRoot()
	msgs := pubsubio.Read(s, pubsubio.ReadConfig{
		Project:      "my-project",
		Subscription: "dead-letter-replay",
		IdleTimeout:  30 * time.Second,
	})
	rejected := pubsubio.Publish(s, pubsubio.PublishConfig{Project: "my-project", Topic: "requests"}, msgs)
	_ = rejected // Write it to an error sink.
	_ = p        // Run it with beamx.Run.
}

// Acknowledge each message only once its result is durably published:
// nothing buffered in the pipeline is lost if the job dies, since Pub/Sub
// delivers unacknowledged messages again.
func Example_manualAck() {
	p, s := beam.NewPipelineWithRoot()
	in := pubsubio.AckConfig{Project: "my-project", Subscription: "requests"}
	msgs := pubsubio.Read(s, pubsubio.ReadConfig{
		Project:      in.Project,
		Subscription: in.Subscription,
		ManualAck:    true,
	})
	// ... transform msgs, keeping each Message's AckID ...
	rejected, published := pubsubio.PublishAcked(s, pubsubio.PublishConfig{Project: "my-project", Topic: "results"}, msgs)
	pubsubio.Ack(s, in, published)
	_ = rejected // Write it to an error sink, then Ack its Message.AckID too.
	_ = p        // Run it with beamx.Run.
}
