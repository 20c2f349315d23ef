package quota

// What the external tests read of Slots' insides.

// SlotsKeys is the number of keys s holds a TAT for.
func SlotsKeys(s *Slots) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tat)
}
