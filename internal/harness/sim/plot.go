package sim

import (
	"fmt"
	"image/color"
	"io"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Colours of the plotted series.
var (
	colourAccepted = color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff} // green
	colourBackend  = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff} // orange
	colourClient   = color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff} // purple
	colourLimit    = color.RGBA{R: 0x66, G: 0x66, B: 0x66, A: 0xff} // grey
)

// WritePlot draws the runs of case c in format "svg" or "png": a panel per
// algorithm (rows) and number of groups (columns), each showing per second
// the calls accepted, the calls the backend rejected, the elements rejected
// by the client, and min(offered, capacity) dashed. The counts are averaged
// over plotSmoothing seconds, centred: a group's batches come a little
// more than a second apart, so raw per-second counts alternate between
// seconds with two batches and seconds with none. All panels share the
// scales; the vertical one reaches a little above the most offered or
// accepted in a second, and a panel whose rejections go higher (sending
// everything again and again) says it is clipped. results may hold other
// cases' results too; the case's are taken in the order Suite.Run gives
// them.
func WritePlot(w io.Writer, format string, c Case, results []Result) error {
	sc := c.Scenario
	var newCanvas func(w, h vg.Length) vg.CanvasWriterTo
	switch format {
	case "svg":
		newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) }
	case "png":
		newCanvas = func(w, h vg.Length) vg.CanvasWriterTo {
			return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))}
		}
	default:
		return fmt.Errorf("sim: unknown plot format %q (want svg or png)", format)
	}
	var algs []string
	var groups []int
	byKey := map[string]*Result{}
	ymax := 1.0
	for i := range results {
		r := &results[i]
		if r.Case != c.Name {
			continue
		}
		if !slices.Contains(algs, r.Algorithm) {
			algs = append(algs, r.Algorithm)
		}
		if !slices.Contains(groups, r.Groups) {
			groups = append(groups, r.Groups)
		}
		byKey[fmt.Sprint(r.Algorithm, "/", r.Groups)] = r
		for _, ys := range [][]float64{smooth(r.Series.Offered), smooth(r.Series.Accepted), r.Series.Limit} {
			ymax = max(ymax, slices.Max(ys))
		}
	}
	if len(algs) == 0 {
		return fmt.Errorf("sim: no results for case %s", c.Name)
	}
	ymax *= 1.1

	plots := make([][]*plot.Plot, len(algs))
	for row, alg := range algs {
		plots[row] = make([]*plot.Plot, len(groups))
		for col, g := range groups {
			p := plot.New()
			plots[row][col] = p
			p.Title.Text = fmt.Sprintf("%s, G=%d", alg, g)
			p.Title.TextStyle.Font.Size = vg.Points(9)
			p.X.Min, p.X.Max = 0, sc.Duration.Seconds()
			p.Y.Min, p.Y.Max = 0, ymax
			p.X.Tick.Label.Font.Size = vg.Points(7)
			p.Y.Tick.Label.Font.Size = vg.Points(7)
			if row == len(algs)-1 {
				p.X.Label.Text = "time (s)"
				p.X.Label.TextStyle.Font.Size = vg.Points(8)
			}
			if col == 0 {
				p.Y.Label.Text = fmt.Sprintf("per second (%d s mean)", plotSmoothing)
				p.Y.Label.TextStyle.Font.Size = vg.Points(8)
			}
			r := byKey[fmt.Sprint(alg, "/", g)]
			if r == nil {
				continue
			}
			if err := addSeries(p, r, row == 0 && col == 0); err != nil {
				return err
			}
			// Adding lines widened the axes to their data.
			p.X.Min, p.X.Max = 0, sc.Duration.Seconds()
			p.Y.Min, p.Y.Max = 0, ymax
			if slices.Max(smooth(r.Series.BackendRejected)) > ymax || slices.Max(smooth(r.Series.ClientRejected)) > ymax {
				p.Title.Text += fmt.Sprintf(" (clipped at %.0f/s)", ymax)
			}
		}
	}

	width := vg.Length(len(groups)) * 6 * vg.Inch
	height := vg.Length(len(algs))*1.7*vg.Inch + 0.4*vg.Inch
	img := newCanvas(width, height)
	dc := draw.New(img)
	tiles := draw.Tiles{
		Rows: len(algs), Cols: len(groups),
		PadX: 4 * vg.Millimeter, PadY: 3 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter,
	}
	canvases := plot.Align(plots, tiles, dc)
	for row := range plots {
		for col := range plots[row] {
			plots[row][col].Draw(canvases[row][col])
		}
	}
	_, err := img.WriteTo(w)
	return err
}

// addSeries adds the lines of one run to p, and a legend if legend is set.
func addSeries(p *plot.Plot, r *Result, legend bool) error {
	s := r.Series
	lines := []struct {
		name   string
		colour color.Color
		dashed bool
		y      []float64
	}{
		{"min(offered, capacity)", colourLimit, true, s.Limit},
		{"client-rejected", colourClient, false, smooth(s.ClientRejected)},
		{"backend-rejected", colourBackend, false, smooth(s.BackendRejected)},
		{"accepted", colourAccepted, false, smooth(s.Accepted)},
	}
	for _, ls := range lines {
		xys := make(plotter.XYs, len(ls.y))
		for i := range xys {
			xys[i].X, xys[i].Y = float64(i)+0.5, ls.y[i]
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = ls.colour
		l.Width = vg.Points(0.6)
		if ls.dashed {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		}
		p.Add(l)
		if legend {
			p.Legend.Add(ls.name, l)
		}
	}
	if legend {
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Size = vg.Points(7)
	}
	return nil
}

// plotSmoothing is the width, in seconds, of the moving average plotted.
const plotSmoothing = 5

// smooth returns the centred moving average of counts over plotSmoothing
// seconds (fewer at the ends).
func smooth(counts []int64) []float64 {
	out := make([]float64, len(counts))
	for i := range counts {
		lo, hi := max(0, i-plotSmoothing/2), min(len(counts), i+plotSmoothing/2+1)
		var sum int64
		for _, c := range counts[lo:hi] {
			sum += c
		}
		out[i] = float64(sum) / float64(hi-lo)
	}
	return out
}
