package sim

import (
	"math"
	"math/rand/v2"
)

// poisson draws from the Poisson distribution with mean lam ≥ 0: by
// multiplication of uniforms for small means, and by Hörmann's transformed
// rejection with squeeze (PTRS, 1993) otherwise, as NumPy does.
func poisson(r *rand.Rand, lam float64) int64 {
	switch {
	case !(lam > 0):
		return 0
	case lam < 10:
		limit := math.Exp(-lam)
		var k int64
		for prod := r.Float64(); prod > limit; prod *= r.Float64() {
			k++
		}
		return k
	}
	slam := math.Sqrt(lam)
	loglam := math.Log(lam)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invalpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lam + 0.43)
		if us >= 0.07 && v <= vr {
			return int64(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invalpha)-math.Log(a/(us*us)+b) <= -lam+k*loglam-lg {
			return int64(k)
		}
	}
}
