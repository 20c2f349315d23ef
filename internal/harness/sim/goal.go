package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Goal is what a throttle is to achieve in a Case. Zero fields set no goal.
type Goal struct {
	// MaxWaste bounds the share of calls sent that the backend rejects.
	MaxWaste float64
	// MinUtilisation is the least utilisation.
	MinUtilisation float64
	// MinOracleShare is the least utilisation as a share of the oracle's in
	// the same case with as many groups.
	MinOracleShare float64
	// MinFairness is the least Jain's index of the groups' accepted calls
	// under overload, checked with more than one group when measured (see
	// Metrics.Fairness).
	MinFairness float64
	// NoClientRejects requires that no element be rejected by the client.
	NoClientRejects bool
	// RecoverWithin bounds the recovery time after the changes to the
	// phases listed in Recover (indices into the scenario's Phases).
	RecoverWithin time.Duration
	Recover       []int
	// AllSucceed requires every element to succeed by the end of the run
	// (a bounded input).
	AllSucceed bool
	// MaxDrainFactor bounds Metrics.Drained as a multiple of
	// Metrics.IdealDrain.
	MaxDrainFactor float64
	// MinRunUse is the least Metrics.RunUse, the share of the capacity a
	// bounded input used over the run.
	MinRunUse float64
	// MinSteadyUse is the least Metrics.SteadyUse, the share of the
	// capacity used from SteadyFrom on: for limiters whose rate is even
	// over a second.
	MinSteadyUse float64
	// NoTimeouts requires that no call time out (Config.CallTimeout).
	NoTimeouts bool
	// MaxAnswerP99 bounds Metrics.AnswerP99, the backend's time to answer.
	MaxAnswerP99 time.Duration
	// MinTimedOut is the least share of the calls sent that time out: the
	// goal of a contrast, a case that shows what another case's
	// configuration avoids.
	MinTimedOut float64
	// MinWindowUse is the least share of a quota window's quota used, in
	// every window but the run's first (see [WindowUse]): windows Window
	// long (whole seconds), the first ending FirstWindowEnd after the start
	// (zero: Window).
	MinWindowUse   float64
	Window         time.Duration
	FirstWindowEnd time.Duration
	// MinWaste is the least waste: the goal of a contrast, as MinTimedOut.
	MinWaste float64
	// Binding names the limit that is to bind, of a backend with several
	// (Result.Limits): MinBindingUse is the least share of it used in
	// each of its windows but the run's first and those beginning in the
	// warm-up, and NoOtherRefusals requires that no other limit refuse a
	// request.
	Binding         string
	MinBindingUse   float64
	NoOtherRefusals bool
}

// Check is the outcome of one goal on one run.
type Check struct {
	Goal string // what is required, such as "waste ≤ 5.0 %"
	Got  string // what the run achieved
	Met  bool
}

// Check returns the goals of g against run r of scenario sc, in a fixed
// order. oracle is the oracle's result in the same case with as many
// groups, or nil if there is none (a MinOracleShare goal is then not met).
func (g Goal) Check(sc Scenario, r Result, oracle *Result) []Check {
	m := r.Metrics
	var cs []Check
	if g.MaxWaste > 0 {
		cs = append(cs, Check{fmt.Sprintf("waste ≤ %s", percent(g.MaxWaste)), percent(m.Waste), m.Waste <= g.MaxWaste})
	}
	if g.MinUtilisation > 0 {
		cs = append(cs, Check{fmt.Sprintf("utilisation ≥ %s", percent(g.MinUtilisation)), percent(m.Utilisation),
			m.Utilisation >= g.MinUtilisation})
	}
	if g.MinOracleShare > 0 {
		c := Check{Goal: fmt.Sprintf("utilisation ≥ %s of the oracle's", percent(g.MinOracleShare)), Got: "no oracle run"}
		if oracle != nil {
			share := ratio(m.Utilisation, oracle.Metrics.Utilisation)
			c.Got, c.Met = fmt.Sprintf("%s (%s of %s)", percent(share), percent(m.Utilisation), percent(oracle.Metrics.Utilisation)),
				share >= g.MinOracleShare
		}
		cs = append(cs, c)
	}
	if g.MinFairness > 0 && r.Groups > 1 && !math.IsNaN(m.Fairness) {
		cs = append(cs, Check{fmt.Sprintf("fairness ≥ %.2f", g.MinFairness), fmt.Sprintf("%.3f", m.Fairness),
			m.Fairness >= g.MinFairness})
	}
	if g.NoClientRejects {
		cs = append(cs, Check{"no client rejects", fmt.Sprint(m.ClientRejected), m.ClientRejected == 0})
	}
	if g.AllSucceed {
		o := r.Outcomes
		cs = append(cs, Check{"every element succeeds", fmt.Sprintf("%d of %d", o.Success, o.Arrived), o.Success == o.Arrived})
	}
	if g.MaxDrainFactor > 0 {
		c := Check{Goal: fmt.Sprintf("done within %.2f × %s", g.MaxDrainFactor, delayText(m.IdealDrain)), Got: "not done"}
		if m.Drained >= 0 {
			c.Got = fmt.Sprintf("%s (%.2f ×)", delayText(m.Drained), ratio(m.Drained.Seconds(), m.IdealDrain.Seconds()))
			c.Met = m.Drained.Seconds() <= g.MaxDrainFactor*m.IdealDrain.Seconds()
		}
		cs = append(cs, c)
	}
	if g.MinRunUse > 0 {
		cs = append(cs, Check{fmt.Sprintf("run ≥ %s of the quota", percent(g.MinRunUse)),
			fmt.Sprintf("%s (the last accepted sent at %s)", percent(m.RunUse), delayText(m.LastAccepted)), m.RunUse >= g.MinRunUse})
	}
	if g.MinSteadyUse > 0 {
		cs = append(cs, Check{fmt.Sprintf("≥ %s of the quota from %s", percent(g.MinSteadyUse), delayText(SteadyFrom)),
			percent(m.SteadyUse), m.SteadyUse >= g.MinSteadyUse})
	}
	if g.NoTimeouts {
		cs = append(cs, Check{"no call times out", fmt.Sprint(m.TimedOut), m.TimedOut == 0})
	}
	if g.MaxAnswerP99 > 0 {
		cs = append(cs, Check{fmt.Sprintf("answer p99 ≤ %s", delayText(g.MaxAnswerP99)), delayText(m.AnswerP99),
			m.AnswerP99 <= g.MaxAnswerP99})
	}
	if g.MinTimedOut > 0 {
		share := ratio(float64(m.TimedOut), float64(m.Sent))
		cs = append(cs, Check{fmt.Sprintf("timeouts ≥ %s of calls (the contrast)", percent(g.MinTimedOut)),
			fmt.Sprintf("%s (%d of %d)", percent(share), m.TimedOut, m.Sent), m.Sent > 0 && share >= g.MinTimedOut})
	}
	if g.MinWindowUse > 0 {
		c := Check{Goal: fmt.Sprintf("each window ≥ %s used", percent(g.MinWindowUse)), Got: "no whole window"}
		if use, from, ok := WindowUse(sc, r.Series, g.Window, g.FirstWindowEnd); ok {
			c.Got, c.Met = fmt.Sprintf("%s (the window from %s)", percent(use), formatMinutes(from)), use >= g.MinWindowUse
		}
		cs = append(cs, c)
	}
	if g.MinWaste > 0 {
		cs = append(cs, Check{fmt.Sprintf("waste ≥ %s (the contrast)", percent(g.MinWaste)), percent(m.Waste), m.Waste >= g.MinWaste})
	}
	cs = append(cs, g.checkLimits(sc, r.Limits)...)
	for _, i := range g.Recover {
		rc := m.Recovery[i-1]
		cs = append(cs, Check{
			Goal: fmt.Sprintf("recovery at %s ≤ %d s", formatMinutes(sc.Phases[i].At), int(g.RecoverWithin/time.Second)),
			Got:  recoveryText(rc),
			Met:  rc.Measured && rc.Time >= 0 && rc.Time <= g.RecoverWithin,
		})
	}
	return cs
}

// String lists the goals, as "waste ≤ 5.0 %, utilisation ≥ 97.0 %".
func (g Goal) String() string {
	var gs []string
	if g.MaxWaste > 0 {
		gs = append(gs, fmt.Sprintf("waste ≤ %s", percent(g.MaxWaste)))
	}
	if g.MinUtilisation > 0 {
		gs = append(gs, fmt.Sprintf("utilisation ≥ %s", percent(g.MinUtilisation)))
	}
	if g.MinOracleShare > 0 {
		gs = append(gs, fmt.Sprintf("utilisation ≥ %s of the oracle's", percent(g.MinOracleShare)))
	}
	if g.MinFairness > 0 {
		gs = append(gs, fmt.Sprintf("fairness ≥ %.2f", g.MinFairness))
	}
	if g.NoClientRejects {
		gs = append(gs, "no client rejects")
	}
	if g.AllSucceed {
		gs = append(gs, "every element succeeds")
	}
	if g.MaxDrainFactor > 0 {
		gs = append(gs, fmt.Sprintf("done within %.2f × the ideal time", g.MaxDrainFactor))
	}
	if g.MinRunUse > 0 {
		gs = append(gs, fmt.Sprintf("run ≥ %s of the quota", percent(g.MinRunUse)))
	}
	if g.MinSteadyUse > 0 {
		gs = append(gs, fmt.Sprintf("≥ %s of the quota from %s", percent(g.MinSteadyUse), delayText(SteadyFrom)))
	}
	if len(g.Recover) > 0 {
		gs = append(gs, fmt.Sprintf("recovery ≤ %d s", int(g.RecoverWithin/time.Second)))
	}
	if g.NoTimeouts {
		gs = append(gs, "no call times out")
	}
	if g.MaxAnswerP99 > 0 {
		gs = append(gs, fmt.Sprintf("answer p99 ≤ %s", delayText(g.MaxAnswerP99)))
	}
	if g.MinTimedOut > 0 {
		gs = append(gs, fmt.Sprintf("timeouts ≥ %s of calls (the contrast)", percent(g.MinTimedOut)))
	}
	if g.MinWindowUse > 0 {
		gs = append(gs, fmt.Sprintf("each window ≥ %s used", percent(g.MinWindowUse)))
	}
	if g.MinWaste > 0 {
		gs = append(gs, fmt.Sprintf("waste ≥ %s (the contrast)", percent(g.MinWaste)))
	}
	if g.MinBindingUse > 0 {
		gs = append(gs, bindingGoal(g))
	}
	if g.NoOtherRefusals {
		gs = append(gs, otherGoal(g))
	}
	return strings.Join(gs, ", ")
}

func bindingGoal(g Goal) string {
	return fmt.Sprintf("%s ≥ %s used in each window", g.Binding, percent(g.MinBindingUse))
}

func otherGoal(g Goal) string { return fmt.Sprintf("no 429 by a limit other than %s", g.Binding) }

// checkLimits checks the goals on the limits of a backend with several.
func (g Goal) checkLimits(sc Scenario, ls []LimitUse) []Check {
	var cs []Check
	if g.MinBindingUse > 0 {
		c := Check{Goal: bindingGoal(g), Got: "no such limit"}
		for _, l := range ls {
			if l.Name != g.Binding {
				continue
			}
			c.Got = "no whole window"
			if use, from, ok := l.leastUse(sc.WarmUp); ok {
				c.Got, c.Met = fmt.Sprintf("%s (the window from %s)", percent(use), formatMinutes(from)), use >= g.MinBindingUse
			}
		}
		cs = append(cs, c)
	}
	if g.NoOtherRefusals {
		c := Check{Goal: otherGoal(g), Got: "no limits measured"}
		if len(ls) > 0 {
			var n int64
			var by []string
			for _, l := range ls {
				if l.Name != g.Binding && l.Refused > 0 {
					n += l.Refused
					by = append(by, fmt.Sprintf("%d by %s", l.Refused, l.Name))
				}
			}
			c.Got, c.Met = "0", n == 0
			if n > 0 {
				c.Got = strings.Join(by, ", ")
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// validate reports whether g fits scenario sc.
func (g Goal) validate(sc Scenario) error {
	for _, i := range g.Recover {
		if i < 1 || i >= len(sc.Phases) {
			return fmt.Errorf("sim: Scenario %s: Goal.Recover index %d is not a phase change", sc.Name, i)
		}
	}
	if g.MinWindowUse > 0 && (g.Window < time.Second || g.Window%time.Second != 0 || g.FirstWindowEnd < 0 ||
		g.FirstWindowEnd > g.Window || g.FirstWindowEnd%time.Second != 0) {
		return fmt.Errorf("sim: Scenario %s: Goal.Window %v and FirstWindowEnd %v must be whole seconds, the end within the window",
			sc.Name, g.Window, g.FirstWindowEnd)
	}
	if (g.MinBindingUse > 0 || g.NoOtherRefusals) && g.Binding == "" {
		return fmt.Errorf("sim: Scenario %s: Goal.MinBindingUse and NoOtherRefusals need Goal.Binding", sc.Name)
	}
	return nil
}

// Met reports whether every check is met.
func Met(cs []Check) bool {
	for _, c := range cs {
		if !c.Met {
			return false
		}
	}
	return true
}

// Misses describes the checks not met, or "✓" if all are: "✗ waste 7.1 %
// (≤ 5.0 %); utilisation 80.0 % (≥ 97.0 %)".
func Misses(cs []Check) string {
	var miss []string
	for _, c := range cs {
		if !c.Met {
			miss = append(miss, fmt.Sprintf("%s: %s", c.Goal, c.Got))
		}
	}
	if len(miss) == 0 {
		return "✓"
	}
	return "✗ " + strings.Join(miss, "; ")
}

func fairnessText(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.2f", f)
}
