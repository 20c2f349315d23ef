package pubsubio

import "github.com/beamthrottle/beamthrottle/internal/pubsubconn"

// OutstandingLeases returns how many messages of subscription sub in project
// on the emulator at endpoint the lease keepers of this process are
// extending.
func OutstandingLeases(project, sub, endpoint string) int {
	n := 0
	for _, k := range leaseKeepers(endpoint, pubsubconn.SubscriptionName(project, sub)) {
		n += k.outstanding()
	}
	return n
}
