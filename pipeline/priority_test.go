package pipeline

import (
	"strings"
	"testing"
)

func TestParsePriority(t *testing.T) {
	for _, tc := range []struct {
		flag    string
		wantOpt bool
		wantErr bool
	}{
		{"", false, false},
		{"json:tier", true, false},
		{"attr:priority", true, false},
		{"json:", false, true},
		{"attr:", false, true},
		{"high", false, true},
	} {
		opt, err := parsePriority(tc.flag)
		if (opt != nil) != tc.wantOpt || (err != nil) != tc.wantErr {
			t.Errorf("parsePriority(%q) = option %v, error %v; want option %v, error %v", tc.flag, opt != nil, err, tc.wantOpt, tc.wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "--priority: ") {
			t.Errorf("parsePriority(%q): error %q does not name the flag", tc.flag, err)
		}
	}
}

// TestPriorityTiers: the tiers the JSON field and the attribute name.
func TestPriorityTiers(t *testing.T) {
	for _, tc := range []struct {
		value string // the field's JSON value, and the attribute's text
		attr  string
		want  int
	}{
		{`"high"`, "high", 1}, {`"HIGH"`, "High", 1}, {`"normal"`, "normal", 0}, {`"low"`, "low", -1},
		{`5`, "5", 1}, {`-2`, "-2", -1}, {`0`, "0", 0}, {`"urgent"`, "urgent", 0}, {`null`, "", 0},
	} {
		j := JSONPriority{Field: "tier"}.Priority(Element{Data: []byte(`{"tier":` + tc.value + `}`)})
		a := AttrPriority{Name: "tier"}.Priority(Element{Attributes: map[string]string{"tier": tc.attr}})
		if j != tc.want || a != tc.want {
			t.Errorf("value %s / %q: JSON tier %d, attribute tier %d; want %d", tc.value, tc.attr, j, a, tc.want)
		}
	}
	if got := (JSONPriority{Field: "tier"}).Priority(Element{Data: []byte("not json")}); got != 0 {
		t.Errorf("a payload that is not JSON: tier %d, want 0", got)
	}
	if got := (AttrPriority{Name: "tier"}).Priority(Element{}); got != 0 {
		t.Errorf("no attribute: tier %d, want 0", got)
	}
}
