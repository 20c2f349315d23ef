package pipeline

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/beamthrottle/beamthrottle/pipeline/pubsubio"
	"github.com/beamthrottle/beamthrottle/transforms/throttle"
)

// TestDeadLetterAttributesCarry: a dead-letter message counts its pass as
// one attempt at least, and keeps the attributes of the message it came
// from, except those this pipeline sets, which it sets afresh (a stale
// status code does not outlive its pass). A malformed attempts attribute
// starts again from this pass, its value in the error. Pub/Sub's limit of
// 100 attributes holds, this pipeline's first.
func TestDeadLetterAttributesCarry(t *testing.T) {
	many := map[string]string{AttrAttempts: "2"}
	for i := range 120 {
		many[fmt.Sprintf("user-%03d", i)] = "v"
	}
	tests := []struct {
		name     string
		r        throttle.Record
		run      string
		attempts string
		kept     map[string]string // original attributes wanted back
		gone     []string          // attributes wanted absent
		size     int               // wanted number of attributes, 0: any
	}{
		{"first pass, no call", throttle.Record{Outcome: throttle.OutcomeClientThrottled}, "", "1", nil, []string{AttrReprocessRun}, 0},
		{"first pass, one call", throttle.Record{Outcome: throttle.OutcomeServerThrottled, Attempts: 1, StatusCode: 429}, "", "1", nil, nil, 0},
		{"reprocessed, no call",
			throttle.Record{Outcome: throttle.OutcomeClientThrottled, Attempts: 3,
				Attributes: map[string]string{AttrAttempts: "3", AttrStatusCode: "429", AttrRetryAfter: "1000", "custom": "x"}},
			"run-1", "4", map[string]string{"custom": "x", AttrReprocessRun: "run-1"}, []string{AttrStatusCode, AttrRetryAfter}, 0},
		{"reprocessed, two calls",
			throttle.Record{Outcome: throttle.OutcomeServerThrottled, Attempts: 5, StatusCode: 429,
				Attributes: map[string]string{AttrAttempts: "3", "custom": "x"}},
			"", "5", map[string]string{"custom": "x", AttrStatusCode: "429"}, nil, 0},
		{"malformed attempts",
			throttle.Record{Outcome: throttle.OutcomeError, Error: `pipeline: dead-letter message m has a malformed "attempts" attribute "many"`,
				Attributes: map[string]string{AttrAttempts: "many", "custom": "x"}},
			"", "1", map[string]string{"custom": "x"}, nil, 0},
		{"too many attributes", throttle.Record{Outcome: throttle.OutcomeClientThrottled, Attempts: 2, Attributes: many},
			"run-1", "3", map[string]string{"user-000": "v", AttrReprocessRun: "run-1"}, []string{"user-119"}, pubsubio.MaxAttributes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := deadLetterAttributes(tc.r, "orig-id", "test", tc.run)
			if a[AttrAttempts] != tc.attempts {
				t.Errorf("attempts %q, want %q", a[AttrAttempts], tc.attempts)
			}
			for k, v := range tc.kept {
				if a[k] != v {
					t.Errorf("attribute %q = %q, want %q", k, a[k], v)
				}
			}
			for _, k := range tc.gone {
				if _, ok := a[k]; ok {
					t.Errorf("attribute %q = %q, want none", k, a[k])
				}
			}
			if tc.size > 0 && len(a) != tc.size {
				t.Errorf("%d attributes, want %d", len(a), tc.size)
			}
			if a[AttrError] != tc.r.Error || a[AttrOutcome] != string(tc.r.Outcome) || a[AttrMessageID] != "orig-id" || a[AttrPipeline] != "test" {
				t.Errorf("attributes %v: want this pass's error, outcome, message ID and pipeline", a)
			}
			if err := pubsubio.Validate(pubsubio.Message{Data: []byte("x"), Attributes: a}); err != nil {
				t.Errorf("Pub/Sub would refuse the attributes: %v", err)
			}
			// Read back, the message has the attempts written.
			if e := messageToElement(pubsubio.Message{Data: []byte("x"), Attributes: a}); fmt.Sprint(e.Attempts) != tc.attempts {
				t.Errorf("read back with attempts %d, want %s", e.Attempts, tc.attempts)
			}
		})
	}
	// The attributes of the record are left as they were.
	r := throttle.Record{Attributes: map[string]string{AttrAttempts: "1", "custom": "x"}}
	deadLetterAttributes(r, "", "test", "run")
	if d := cmp.Diff(map[string]string{AttrAttempts: "1", "custom": "x"}, r.Attributes); d != "" {
		t.Errorf("record's attributes changed (-want +got):\n%s", d)
	}
}
