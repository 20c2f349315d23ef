package redisquota

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beamthrottle/beamthrottle/internal/testenv/services"
	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// TestCheckRate: the first client of a key records its rate and burst;
// clients with the same rate, however written, pass and refresh the
// record; a different rate or burst on the key is a *RateMismatchError
// naming both; another key is apart.
func TestCheckRate(t *testing.T) {
	srv := services.StartRedis(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	ctx := context.Background()
	rate := func(s string) quota.Rate {
		r, err := quota.ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		key      string
		rate     string
		burst    int
		recorded string // "" for a match
	}{
		{"shared", "10/s", 0, ""},
		{"shared", "600/m", 0, ""},
		{"shared", "10/s", 1, ""}, // a burst of 1 is the slots too
		{"shared", "5/s", 0, "10/s"},
		{"shared", "20/s", 0, "10/s"},
		{"shared", "10/s", 20, "10/s"},
		{"other", "5/s", 0, ""},
		{"other", "300/m", 0, ""},
		{"bursty", "10/s", 20, ""},
		{"bursty", "10/s", 0, "10/s, burst 20"},
	}
	for _, tc := range tests {
		err := CheckRate(ctx, c, tc.key, rate(tc.rate), tc.burst)
		var me *RateMismatchError
		switch {
		case tc.recorded == "" && err != nil:
			t.Errorf("%s at %s burst %d: %v, want a match", tc.key, tc.rate, tc.burst, err)
		case tc.recorded != "" && (!errors.As(err, &me) || me.Recorded != tc.recorded || me.Key != tc.key):
			t.Errorf("%s at %s burst %d: %v, want a mismatch with %s", tc.key, tc.rate, tc.burst, err, tc.recorded)
		}
	}
	ttl, err := c.PTTL(ctx, RateRecordKey("shared")).Result()
	if err != nil || ttl <= 0 || ttl > RateRecordTTL {
		t.Errorf("the record's TTL is %v (%v), want within (0, %v]", ttl, err, RateRecordTTL)
	}
	srv.Kill()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var me *RateMismatchError
	if err := CheckRate(short, c, "shared", rate("5/s"), 0); err == nil || errors.As(err, &me) {
		t.Errorf("with Redis down: %v, want an error that is not a mismatch", err)
	}
}
