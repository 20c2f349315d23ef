package firing_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/clientcall"
	"github.com/beamthrottle/beamthrottle/internal/firing"
)

// counted is a quota of permits held by the worker, with no I/O: a call
// the worker holds permits for is granted at once; otherwise it asks for a
// round trip, whose answer (a count of permits, or an error: failing
// closed until later) the firing reports.
type counted struct {
	have  int
	until time.Time // failing closed until then
}

func (q *counted) Permit(now time.Time, _, cost, want int) firing.Permit {
	switch {
	case q.have >= cost:
		q.have -= cost
		return firing.Permit{OK: true, Paid: true}
	case now.Before(q.until):
		return firing.Permit{RetryAt: q.until}
	}
	return firing.Permit{Ask: true, Token: want}
}

func (q *counted) Record(now time.Time, _ firing.Permit, a firing.QuotaAnswer) {
	if a.Err != nil {
		q.until = now.Add(time.Second)
		return
	}
	q.have += a.Answer.(int)
}

func (q *counted) Settle(firing.Permit, bool)                     {}
func (q *counted) Missed(firing.Permit)                           {}
func (q *counted) Slots(time.Duration) (int, time.Duration, bool) { return 0, 0, false }
func (q *counted) WindowEnd(time.Time) time.Time                  { return time.Time{} }

// TestFiringAskQuota: a round trip to the quota's service is a step of the
// firing (AskQuota), for what the policy would send; the firing waits for
// its answer (QuotaAnswered), then sends on the permits it brought, without
// another round trip while they last. A failed round trip leaves the quota
// failing closed, and the firing postpones past its wait: its elements
// stay queued.
func TestFiringAskQuota(t *testing.T) {
	for _, c := range []struct {
		name    string
		answers []firing.QuotaAnswer
		want    []string
		rest    int // elements left queued
	}{
		{"grants", []firing.QuotaAnswer{{Answer: 2}, {Answer: 1}}, []string{
			"ask 3", "wait", "answered 2 after 10ms", "call 0", "call 1", "ask 1", "wait", "answered 1 after 10ms", "call 2",
		}, 0},
		{"fails", []firing.QuotaAnswer{{Err: errors.New("down")}}, []string{
			"ask 3", "wait", "answered <nil> after 10ms", // then postponed past the firing's wait: done
		}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := &counted{}
			f := firing.New(firing.Config{Wait: 500 * time.Millisecond, BatchInterval: time.Second}, firing.Env{Policy: &script{}, Quota: q}, t0, t0)
			for range 3 {
				f.Add(t0, firing.Elem{Since: t0})
			}
			var log []string
			now, asked := t0, time.Time{}
			answers := c.answers
			for range 20 {
				s := f.Next(now)
				switch s.Action {
				case firing.AskQuota:
					log = append(log, fmt.Sprintf("ask %v", s.Permit.Token))
					asked = now
				case firing.Wait:
					if asked.IsZero() {
						log = append(log, fmt.Sprintf("wait until %v", s.Until.Sub(t0)))
						now = s.Until
						continue
					}
					log = append(log, "wait")
					now = now.Add(10 * time.Millisecond)
					a := answers[0]
					answers = answers[1:]
					log = append(log, fmt.Sprintf("answered %v after %v", a.Answer, now.Sub(asked)))
					asked = time.Time{}
					f.QuotaAnswered(now, a)
				case firing.Call:
					log = append(log, "call "+fmtInts(s.Elems))
					f.Answered(now, s.Call, []firing.Result{{Class: clientcall.Success}})
				case firing.Route:
				case firing.Done:
					if diff := cmp.Diff(c.want, log); diff != "" {
						t.Errorf("steps (-want +got):\n%s", diff)
					}
					if got := len(f.Rest()); got != c.rest {
						t.Errorf("%d elements left queued, want %d", got, c.rest)
					}
					return
				}
			}
			t.Fatalf("no end after 20 steps: %v", log)
		})
	}
}
