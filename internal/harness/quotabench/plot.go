package quotabench

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Colours of the plotted series, as sim's plots.
var (
	colourAccepted   = color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff} // green
	colourRejected   = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff} // orange
	colourCompetitor = color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff} // purple
	colourCapacity   = color.RGBA{R: 0x66, G: 0x66, B: 0x66, A: 0xff} // grey
)

// plotCols is how many panels the plot has side by side.
const plotCols = 2

// WritePlot draws results as SVG: a panel per scenario showing per second
// the pipelines' calls accepted and rejected by the quota server, the
// competitor's accepted calls, and the capacity dashed; a fault's span is
// shaded. All panels share the scales.
func WritePlot(w io.Writer, capacity int, results []Result) error {
	return writePlot(w, capacity, results, func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) })
}

// writePlot is WritePlot on the canvas that newCanvas makes.
func writePlot(w io.Writer, capacity int, results []Result, newCanvas func(w, h vg.Length) vg.CanvasWriterTo) error {
	if len(results) == 0 {
		return fmt.Errorf("quotabench: nothing to plot")
	}
	xmax, ymax := 10.0, 1.5*float64(capacity) // room for the legend above the capacity
	for _, r := range results {
		xmax = max(xmax, float64(len(r.Measure.Series)))
		for _, p := range r.Measure.Series {
			ymax = max(ymax, 1.05*float64(p.Accepted+p.Rejected))
		}
	}
	rows := (len(results) + plotCols - 1) / plotCols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, plotCols)
	}
	for i, r := range results {
		p := plot.New()
		plots[i/plotCols][i%plotCols] = p
		p.Title.Text = r.Scenario.Name + ": " + r.Scenario.Title
		p.Title.TextStyle.Font.Size = vg.Points(8)
		p.X.Tick.Label.Font.Size = vg.Points(7)
		p.Y.Tick.Label.Font.Size = vg.Points(7)
		p.X.Label.Text = "time (s)"
		p.X.Label.TextStyle.Font.Size = vg.Points(7)
		p.Y.Label.Text = "calls per second"
		p.Y.Label.TextStyle.Font.Size = vg.Points(7)
		if err := addRun(p, r, capacity, ymax, i == 0); err != nil {
			return err
		}
		p.X.Min, p.X.Max = 0, xmax
		p.Y.Min, p.Y.Max = 0, ymax
	}
	for i := len(results); i < rows*plotCols; i++ { // an empty last panel
		plots[i/plotCols][i%plotCols] = plot.New()
		plots[i/plotCols][i%plotCols].HideAxes()
	}

	img := newCanvas(plotCols*5*vg.Inch, vg.Length(rows)*2*vg.Inch)
	tiles := draw.Tiles{
		Rows: rows, Cols: plotCols,
		PadX: 4 * vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter,
	}
	canvases := plot.Align(plots, tiles, draw.New(img))
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	_, err := img.WriteTo(w)
	return err
}

// addRun adds the lines of one run to p, and a legend if legend is set.
func addRun(p *plot.Plot, r Result, capacity int, ymax float64, legend bool) error {
	s := r.Measure.Series
	if len(s) == 0 {
		return nil
	}
	t0 := s[0].T
	if r.FaultFrom != 0 || legend {
		from, to := float64(r.FaultFrom-t0), float64(r.FaultTo-t0)
		shade, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: 0}, {X: to, Y: 0}, {X: to, Y: ymax}, {X: from, Y: ymax}})
		if err != nil {
			return err
		}
		shade.Color = color.RGBA{R: 0xe4, G: 0xe4, B: 0xe4, A: 0xff}
		shade.LineStyle.Width = 0
		if r.FaultFrom != 0 {
			p.Add(shade)
		}
		if legend {
			p.Legend.Add("fault (killed to restarted)", shade)
		}
	}
	lines := []struct {
		name   string
		colour color.Color
		dashed bool
		y      func(Point) float64
	}{
		{"capacity", colourCapacity, true, func(Point) float64 { return float64(capacity) }},
		{"competitor accepted", colourCompetitor, false, func(p Point) float64 { return float64(p.CompetitorAccepted) }},
		{"pipelines rejected", colourRejected, false, func(p Point) float64 { return float64(p.Rejected) }},
		{"pipelines accepted", colourAccepted, false, func(p Point) float64 { return float64(p.Accepted) }},
	}
	for _, ls := range lines {
		draw := ls.name != "competitor accepted" || r.Scenario.Competitor > 0
		if !draw && !legend {
			continue
		}
		xys := make(plotter.XYs, len(s))
		for i, pt := range s {
			xys[i].X, xys[i].Y = float64(pt.T-t0)+0.5, ls.y(pt)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = ls.colour
		l.Width = vg.Points(0.7)
		if ls.dashed {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		}
		if draw {
			p.Add(l)
		}
		if legend {
			p.Legend.Add(ls.name, l)
		}
	}
	if legend {
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.TextStyle.Font.Size = vg.Points(6)
	}
	return nil
}
