package quotabench

// Merge returns the results of an earlier run, old, whose report's header
// was prev, with the results of fresh in place of old's results of the same
// scenario (all its runs), or added; in the order of Scenarios. Results of scenarios no
// longer in Scenarios are dropped. The results kept from old say which run
// measured them (Result.Command and When, from prev unless they say it
// already); those of fresh are left as they are, for the new header.
func Merge(prev Header, old, fresh []Result) []Result {
	byName := map[string][]Result{}
	for _, r := range old {
		if r.Command == "" {
			r.Command, r.When = prev.Command, prev.When
		}
		byName[r.Scenario.Name] = append(byName[r.Scenario.Name], r)
	}
	renewed := map[string]bool{}
	for _, r := range fresh {
		if !renewed[r.Scenario.Name] {
			renewed[r.Scenario.Name] = true
			byName[r.Scenario.Name] = nil
		}
		byName[r.Scenario.Name] = append(byName[r.Scenario.Name], r)
	}
	var out []Result
	for _, sc := range Scenarios {
		out = append(out, byName[sc.Name]...)
	}
	return out
}
