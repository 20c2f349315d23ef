package clientcall

import (
	"net/http"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// ietf reads the RateLimit-Policy and RateLimit fields of every draft, and
// the RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset fields of the
// older ones: first the named policies of draft 8 and later, joined with
// their RateLimit items by name, then the older drafts' current limits with
// the bare quotas of RateLimit-Policy attached.
func ietf(h http.Header, c clock) []Advertised {
	named, bare := policyField(h.Values("RateLimit-Policy"))
	items, draft7 := rateLimitField(h.Values("RateLimit"), c)
	joined := make([]bool, len(named))
	var alone []Advertised // RateLimit items without a policy
	for _, it := range items {
		i := 0
		for i < len(named) && (joined[i] || named[i].Name != it.Name) {
			i++
		}
		if i == len(named) {
			alone = append(alone, it)
			continue
		}
		joined[i] = true
		named[i].Remaining, named[i].Reset = it.Remaining, it.Reset
	}
	out := appendKnown(appendKnown(nil, named...), alone...)
	cur, limitPolicies := triple(h, "RateLimit-", c)
	return append(out, attach(append(draft7, cur...), append(bare, limitPolicies...))...)
}

// attach returns cur followed by the policies, after giving each
// observation in cur the window (and, if it has none, the name) of the one
// policy with the same quota, which is then not returned again. When no
// policy or several have that quota, the observation is left as it is.
func attach(cur, policies []Advertised) []Advertised {
	for i := range cur {
		match := -1
		for j, p := range policies {
			if p.Limit != cur[i].Limit || p.Limit < 0 {
				continue
			}
			if match >= 0 {
				match = -1
				break
			}
			match = j
		}
		if match < 0 {
			continue
		}
		p := policies[match]
		if cur[i].Window == 0 {
			cur[i].Window = p.Window
		}
		if cur[i].Name == "" {
			cur[i].Name = p.Name
		}
		policies = append(policies[:match:match], policies[match+1:]...)
	}
	return appendKnown(cur, policies...)
}

// triple reads the Limit, Remaining and Reset fields under prefix, with
// their companions (Reset-After, Used, Resource, Bucket). The Limit field
// may list quota policies after the current limit, as Envoy sends them
// ("10, 10;w=60;name=\"per-minute\""): those are returned apart.
func triple(h http.Header, prefix string, c clock) (cur, policies []Advertised) {
	a := unknown()
	a.Limit, policies = limitField(h.Values(prefix + "Limit"))
	a.Remaining = count(h.Get(prefix + "Remaining"))
	if used := count(h.Get(prefix + "Used")); a.Remaining < 0 && a.Limit >= 0 && used >= 0 {
		a.Remaining = max(a.Limit-used, 0)
	}
	if t, ok := c.resetAfter(h.Get(prefix + "Reset-After")); ok {
		a.Reset = t
	} else if t, ok := c.resetAt(h.Get(prefix + "Reset")); ok {
		a.Reset = t
	}
	a.Name = h.Get(prefix + "Resource")
	if a.Name == "" {
		a.Name = h.Get(prefix + "Bucket")
	}
	return appendKnown(nil, a), policies
}

// policyField reads RateLimit-Policy: the named quota policies of draft 8
// and later ("permin";q=50;w=60;qu="requests"), and the bare quotas of
// older drafts (100;w=60), which have no name unless a name parameter gives
// one.
func policyField(values []string) (named, bare []Advertised) {
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		return nil, nil
	}
	for _, m := range list {
		it, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		a := unknown()
		a.Window = window(it.Params)
		if name, ok := sfName(it.Value); ok {
			a.Name = name
			a.Limit = sfCount(param(it.Params, "q"))
			if qu, ok := sfName(param(it.Params, "qu")); ok && qu != "" {
				a.Unit = qu
			}
			named = append(named, a)
		} else if a.Limit = sfCount(it.Value); a.Limit >= 0 {
			a.Name, _ = param(it.Params, "name").(string)
			bare = append(bare, a)
		}
	}
	return named, bare
}

// rateLimitField reads the RateLimit field: a list of named items of draft 8
// and later ("permin";r=12;t=30) or, when it is not a list, draft 7's
// dictionary (limit=100, remaining=50, reset=30).
func rateLimitField(values []string, c clock) (items, draft7 []Advertised) {
	list, err := httpsfv.UnmarshalList(values)
	if err != nil {
		return nil, dictionaryField(values, c)
	}
	for _, m := range list {
		it, ok := m.(httpsfv.Item)
		name, named := sfName(it.Value)
		if !ok || !named {
			continue
		}
		a := unknown()
		a.Name = name
		a.Remaining = sfCount(param(it.Params, "r"))
		if t, ok := seconds(param(it.Params, "t")); ok {
			a.Reset = c.after(t)
		}
		items = append(items, a)
	}
	return items, nil
}

// dictionaryField reads draft 7's RateLimit dictionary.
func dictionaryField(values []string, c clock) []Advertised {
	d, err := httpsfv.UnmarshalDictionary(values)
	if err != nil {
		return nil
	}
	member := func(key string) any {
		m, _ := d.Get(key)
		it, _ := m.(httpsfv.Item)
		return it.Value
	}
	a := unknown()
	a.Limit = sfCount(member("limit"))
	a.Remaining = sfCount(member("remaining"))
	if t, ok := seconds(member("reset")); ok {
		a.Reset = c.after(t)
	}
	return appendKnown(nil, a)
}

// limitField reads a Limit field: the current limit, then, in Envoy's and
// the early drafts' form, the quota policies (10, 10;w=1, 50;w=60).
func limitField(values []string) (limit int64, policies []Advertised) {
	list, err := httpsfv.UnmarshalList(values)
	if err != nil || len(list) == 0 {
		return -1, nil
	}
	first, _ := list[0].(httpsfv.Item)
	for _, m := range list[1:] {
		it, ok := m.(httpsfv.Item)
		if !ok {
			continue
		}
		a := unknown()
		a.Limit, a.Window = sfCount(it.Value), window(it.Params)
		a.Name, _ = param(it.Params, "name").(string)
		policies = append(policies, a)
	}
	return sfCount(first.Value), policies
}

// param returns the value of the parameter key, or nil.
func param(p *httpsfv.Params, key string) any {
	if p == nil {
		return nil
	}
	v, _ := p.Get(key)
	return v
}

// window reads a w parameter: a positive Integer of seconds, or 0.
func window(p *httpsfv.Params) time.Duration {
	if w, ok := seconds(param(p, "w")); ok {
		return w
	}
	return 0
}

// seconds reads a non-negative Integer of seconds.
func seconds(v any) (time.Duration, bool) {
	n, ok := v.(int64)
	if !ok || n < 0 || n >= maxRetryAfterSeconds {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// sfCount returns v if it is a non-negative Integer, or -1.
func sfCount(v any) int64 {
	if n, ok := v.(int64); ok && n >= 0 {
		return n
	}
	return -1
}

// sfName returns v if it is a String or a Token.
func sfName(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case httpsfv.Token:
		return string(s), true
	}
	return "", false
}

// openAIUnits and anthropicUnits are the buckets each vendor advertises,
// in the order ParseAdvertised returns them.
var (
	openAIUnits    = []string{"requests", "tokens"}
	anthropicUnits = []string{"requests", "tokens", "input-tokens", "output-tokens"}
)

// buckets reads the token buckets OpenAI and Anthropic advertise, one per
// unit.
func buckets(h http.Header, c clock) []Advertised {
	var out []Advertised
	for _, unit := range openAIUnits {
		a := bucket(unit, h.Get("X-RateLimit-Limit-"+unit), h.Get("X-RateLimit-Remaining-"+unit))
		if d, ok := refillIn(h.Get("X-RateLimit-Reset-" + unit)); ok {
			a.Reset = c.after(d)
		}
		out = appendKnown(out, a)
	}
	for _, unit := range anthropicUnits {
		p := "Anthropic-RateLimit-" + unit + "-"
		a := bucket(unit, h.Get(p+"Limit"), h.Get(p+"Remaining"))
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(h.Get(p+"Reset"))); err == nil {
			a.Reset = c.at(t)
		}
		out = appendKnown(out, a)
	}
	return out
}

// bucket returns the observation of a refilling bucket counting unit.
func bucket(unit, limit, remaining string) Advertised {
	return Advertised{Name: unit, Unit: unit, Limit: count(limit), Remaining: count(remaining), Refill: true}
}

// refillIn reads OpenAI's reset: a Go-like duration ("6m0s", "12ms",
// "1h2m3.5s") or bare seconds.
func refillIn(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseDuration(v); err == nil {
		return d, d >= 0
	}
	whole, nanos, ok := decimalSeconds(v)
	if !ok || whole >= maxRetryAfterSeconds {
		return 0, false
	}
	return time.Duration(whole)*time.Second + time.Duration(nanos), true
}
