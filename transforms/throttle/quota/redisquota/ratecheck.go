package redisquota

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beamthrottle/beamthrottle/transforms/throttle/quota"
)

// RateRecordTTL is how long Redis keeps the record of a quota key's rate and
// burst after the last client that checked it (see CheckRate): a job that
// changes its rate on the same key after every job of the old rate stopped
// is refused for that long, unless the record is deleted.
const RateRecordTTL = time.Hour

// RateRecordKey is the Redis key under which the quota key's rate and
// burst are recorded, beside its state ("rate:" + key, "slots:" + key).
func RateRecordKey(key string) string { return "beamthrottle:quota-config:" + key }

// RateMismatchError says that the quota key is recorded in Redis with
// another rate or burst than the client's: clients that share a key must
// agree on both, or the GCRA keeps neither.
type RateMismatchError struct {
	Key      string // the quota key
	Recorded string // the rate and burst recorded, as "10/s" or "10/s, burst 20"
	Want     string // the client's, in the same form
}

func (e *RateMismatchError) Error() string {
	return fmt.Sprintf("quota key %q is in use at %s in Redis, not %s: jobs that share a key must set the same rate and burst "+
		"(use another key, or the same rate; if no job uses %s any more, delete the Redis key %q or wait up to %v)",
		e.Key, e.Recorded, e.Want, e.Recorded, RateRecordKey(e.Key), RateRecordTTL)
}

// checkRateScript records ARGV[1] under KEYS[1] for ARGV[2] ms, unless a
// record with another canonical form (the part before "|") is there, which
// it returns instead. A match refreshes the record's TTL.
var checkRateScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local canon = string.match(cur, '^[^|]*')
  if canon ~= string.match(ARGV[1], '^[^|]*') then
    return cur
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ''
`)

// CheckRate records in Redis that the quota key has rate and burst (0: the
// time slots, with no burst), or returns a *RateMismatchError if a client
// recorded another rate or burst for it within RateRecordTTL. Rates are
// compared by value: "600/m" is "10/s". A check that matches refreshes the
// record's TTL. Any other error says Redis could not be asked.
func CheckRate(ctx context.Context, c redis.UniversalClient, key string, rate quota.Rate, burst int) error {
	if err := rate.Validate(); err != nil {
		return err
	}
	want := rateRecord(rate, burst)
	res, err := checkRateScript.Run(ctx, c, []string{RateRecordKey(key)}, want, RateRecordTTL.Milliseconds()).Text()
	if err != nil {
		return fmt.Errorf("redisquota: checking the rate of quota key %q: %w", key, err)
	}
	if res == "" {
		return nil
	}
	_, human, _ := strings.Cut(res, "|")
	_, mine, _ := strings.Cut(want, "|")
	return &RateMismatchError{Key: key, Recorded: human, Want: mine}
}

// rateRecord is the record of rate and burst: a canonical form (permits
// per nanosecond as a reduced fraction, and the burst), "|", then the form
// people read.
func rateRecord(rate quota.Rate, burst int) string {
	perNs := new(big.Rat).SetFrac64(int64(rate.N), rate.Per.Nanoseconds())
	human := rate.String()
	if burst > 1 {
		human += ", burst " + strconv.Itoa(burst)
	} else {
		burst = 0
	}
	return perNs.String() + " burst " + strconv.Itoa(burst) + "|" + human
}
