package clientcall

import "context"

// advertisedKey is the context key of the function that receives the
// limits a call's answer advertised.
type advertisedKey struct{}

// WithAdvertised returns a copy of ctx whose [ReportAdvertised] calls pass
// the limits to sink. The transform gives each call such a context, so that
// it paces from what the API says of its quota. A caller may report from
// any goroutine of its call, so sink must be safe for concurrent use.
func WithAdvertised(ctx context.Context, sink func([]Advertised)) context.Context {
	return context.WithValue(ctx, advertisedKey{}, sink)
}

// ReportAdvertised tells whoever made the call with ctx the limits its
// answer advertised (success or refusal). [HTTP] reports what
// [ParseAdvertised] reads in every answer; a custom Caller that learns its
// API's quota another way (an SDK's response headers, a gRPC trailer)
// reports it with this, and one that knows what its request took of a
// limit on tokens (the usage in an LLM API's response) sets Used, so that
// the transform can pace under that limit too. With no sink in ctx (a
// caller used outside the transform), or no limits, it does nothing.
func ReportAdvertised(ctx context.Context, a []Advertised) {
	if sink := advertisedSink(ctx); sink != nil && len(a) > 0 {
		sink(a)
	}
}

// advertisedSink returns ctx's sink, or nil.
func advertisedSink(ctx context.Context) func([]Advertised) {
	sink, _ := ctx.Value(advertisedKey{}).(func([]Advertised))
	return sink
}
