package quotabench

// Merge returns the results of an earlier run, old, whose report's header
// was prev, with each result of fresh in place of old's result of the same
// scenario, or added; in the order of Scenarios. Results of scenarios no
// longer in Scenarios are dropped. The results kept from old say which run
// measured them (Result.Command and When, from prev unless they say it
// already); those of fresh are left as they are, for the new header.
func Merge(prev Header, old, fresh []Result) []Result {
	byName := map[string]Result{}
	for _, r := range old {
		if r.Command == "" {
			r.Command, r.When = prev.Command, prev.When
		}
		byName[r.Scenario.Name] = r
	}
	for _, r := range fresh {
		byName[r.Scenario.Name] = r
	}
	var out []Result
	for _, sc := range Scenarios {
		if r, ok := byName[sc.Name]; ok {
			out = append(out, r)
		}
	}
	return out
}
