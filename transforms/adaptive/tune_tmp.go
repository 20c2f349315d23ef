package adaptive

// SetTune is temporary, for tuning.
func SetTune(g, gd, margin, fade, base, maxp float64) {
	gain, gainDown, accelMargin, longestFade, accelBase, maxProbe = g, gd, int64(margin), fade, base, maxp
}
