package harness

import (
	"image/color"
	"io"
	"math"
	"sort"

	"github.com/storel/storel/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// series is one line or set of points of a plot.
type series struct {
	name string
	xs   []float64
	ys   []float64 // milliseconds
}

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
}

// clampLog keeps values plottable on a log axis (0 ms shows as 1 µs).
func clampLog(v float64) float64 { return math.Max(v, 1e-3) }

// linePlot draws series against a numeric x axis, log-log when asked.
func linePlot(path, title, xlabel, ylabel string, logX bool, ss []series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	drawn := 0
	for i, s := range ss {
		var pts plotter.XYs
		idx := make([]int, len(s.xs))
		for j := range idx {
			idx[j] = j
		}
		sort.Slice(idx, func(a, b int) bool { return s.xs[idx[a]] < s.xs[idx[b]] })
		for _, j := range idx {
			if math.IsNaN(s.ys[j]) || (logX && s.xs[j] <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.xs[j], Y: clampLog(s.ys[j])})
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		l.Color, sc.Color = c, c
		sc.Shape = shapes[i%len(shapes)]
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
		drawn++
	}
	if drawn == 0 {
		return nil
	}
	// gonum widens an empty range to ±1, which reaches 0 on a log axis
	// (and panics there): widen it by a factor instead.
	if p.Y.Min == p.Y.Max {
		p.Y.Min, p.Y.Max = p.Y.Min/2, p.Y.Max*2
	}
	if logX && p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	return savePlot(p, path)
}

var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.PyramidGlyph{}, draw.SquareGlyph{}}

// categoryPlot draws one point per (category, series) on a log y axis,
// the series side by side within each category.
func categoryPlot(path, title, ylabel string, categories []string, ss []series) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.NominalX(categories...)
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
	p.Legend.Top = true
	drawn := 0
	for i, s := range ss {
		var pts plotter.XYs
		off := (float64(i) - float64(len(ss)-1)/2) * 0.8 / float64(max(len(ss), 1))
		for j := range s.xs {
			if math.IsNaN(s.ys[j]) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.xs[j] + off, Y: clampLog(s.ys[j])})
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.Color = palette[i%len(palette)]
		sc.Shape = shapes[i%len(shapes)]
		sc.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(s.name, sc)
		drawn++
	}
	if drawn == 0 {
		return nil
	}
	// Head room above the highest point for the legend.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, y := range s.ys {
			if !math.IsNaN(y) {
				lo, hi = math.Min(lo, clampLog(y)), math.Max(hi, clampLog(y))
			}
		}
	}
	p.Y.Min, p.Y.Max = lo/2, hi*math.Pow(10, 0.35*float64(drawn))
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	p.Add(g)
	return savePlot(p, path)
}

// savePlot writes p as a PNG, replacing an existing picture only once the
// new one is complete.
func savePlot(p *plot.Plot, path string) error {
	wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, "png")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := wt.WriteTo(w)
		return err
	})
}
