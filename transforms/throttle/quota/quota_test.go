package quota_test

import (
	"context"
	"testing"
	"time"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// NoQuota is a Quota.
var _ quota.Quota = quota.NoQuota{}

func TestNoQuota(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		n, want int
	}{
		{1, 1},
		{10, 10},
		{1 << 30, 1 << 30},
		{0, 0},
		{-3, 0},
	}
	for _, tc := range tests {
		g, err := quota.NoQuota{}.Take(context.Background(), "k", tc.n, now)
		if err != nil || g != (quota.Grant{Granted: tc.want}) {
			t.Errorf("NoQuota.Take(%d) = %+v, %v; want %+v, nil", tc.n, g, err, quota.Grant{Granted: tc.want})
		}
	}
}
