package adaptive

// The Pacer's unit: the typical cost of a request, which scales StartRate
// and MinRate (see [Pacer]).

// typical returns the unit, the typical cost of a request, or 1 while no
// request with a cost has set it.
func (p *Pacer) typical() float64 {
	if p.unit == 0 {
		return 1
	}
	return p.unit
}

// learn moves the unit towards the cost c of a request let through; a
// free request (c = 0) does not move it.
func (p *Pacer) learn(c float64) {
	switch {
	case c == 0:
	case p.unit == 0:
		p.unit = min(c, maxUnit)
	default:
		p.unit += (min(c, maxUnit) - p.unit) * unitWeight
	}
}

// floor returns the lowest rate, MinRate × unit.
func (p *Pacer) floor() float64 { return min(p.cfg.MinRate*p.typical(), maxRate) }
