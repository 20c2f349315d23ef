package envoyquota_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota/envoyquota"
)

// Envoy's rate-limit service, with the limit in its configuration under the
// domain "beamthrottle" and the descriptor (quota=translate): a batch is
// granted what the service's current window has left, and the permits lapse
// when the window ends.
func ExampleQuota() {
	entries, err := envoyquota.ParseEntries("quota=translate")
	if err != nil {
		log.Fatal(err)
	}
	q, err := envoyquota.New(envoyquota.Config{
		Addr:    "ratelimit.default.svc.cluster.local:8081",
		Domain:  "beamthrottle",
		Entries: entries,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	g, err := q.Take(ctx, "translate", 10, time.Now())
	if err != nil {
		log.Print(err)
		return
	}
	fmt.Println(g.Granted, "granted; ask again at", g.RetryAt, "; spend them before", q.WindowEnd("translate", time.Now()))
}

func ExampleParseEntries() {
	entries, err := envoyquota.ParseEntries("quota=translate, project=p1")
	fmt.Println(entries, err)
	_, err = envoyquota.ParseEntries("quota")
	fmt.Println(err)
	// Output:
	// [{quota translate} {project p1}] <nil>
	// envoyquota: descriptor entry "quota": want key=value
}
