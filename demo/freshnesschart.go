package demo

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// FreshnessTargetMs is the freshness the demo topology aims at: p99 under
// 500 ms from an epoch's start to its commit in t3, through three levels
// of views.
const FreshnessTargetMs = 500

// levelColors are the lines of bid, t1, t2 and t3, light to dark: the
// top view, whose freshness is the result's, stands out.
var levelColors = []color.Color{
	color.RGBA{R: 170, G: 200, B: 235, A: 255},
	color.RGBA{R: 110, G: 160, B: 220, A: 255},
	color.RGBA{R: 60, G: 120, B: 205, A: 255},
	color.RGBA{R: 20, G: 50, B: 140, A: 255},
}

// WriteFreshnessChart writes a PNG chart of res.Series to path (which must
// end in .png): the freshness in ms of every measured epoch against the
// epoch's start, one line per level of the topology, and a dashed line at
// FreshnessTargetMs. The legend gives each level's p50 and p99; title, when
// set, is the chart's subtitle (the machine, the run).
func WriteFreshnessChart(path, title string, res FreshnessResult) error {
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return fmt.Errorf("freshness chart %q: want a .png file", path)
	}
	if len(res.Series) == 0 {
		return fmt.Errorf("freshness chart %s: no epoch measured", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Freshness of each epoch, %d events/s, %.0f ms epochs\nt3: p50 %.0f ms, p99 %.0f ms",
		res.Rate, res.EpochIntervalMs, res.P50Ms, res.P99Ms)
	if title != "" {
		p.Title.Text += "\n" + title
	}
	p.X.Label.Text = "epoch start, seconds after the first measured epoch (s)"
	p.Y.Label.Text = "freshness: epoch start to commit (ms)"
	p.Add(plotter.NewGrid())
	top := float64(FreshnessTargetMs)
	for i, l := range res.Levels {
		xys := make(plotter.XYs, 0, len(res.Series))
		for _, ef := range res.Series {
			if len(ef.Ms) != len(res.Levels) {
				return fmt.Errorf("freshness chart %s: epoch %d has %d levels, the result %d", path, ef.Epoch, len(ef.Ms), len(res.Levels))
			}
			xys = append(xys, plotter.XY{X: ef.StartS, Y: ef.Ms[i]})
			top = max(top, ef.Ms[i])
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("freshness chart %s: level %s: %w", path, l.Table, err)
		}
		line.Color = levelColors[min(i, len(levelColors)-1)]
		line.Width = vg.Points(1)
		if i == len(res.Levels)-1 {
			line.Width = vg.Points(1.5)
		}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s: p50 %.0f ms, p99 %.0f ms", l.Table, l.P50Ms, l.P99Ms), line)
	}
	last := res.Series[len(res.Series)-1].StartS
	target, err := plotter.NewLine(plotter.XYs{{X: 0, Y: FreshnessTargetMs}, {X: last, Y: FreshnessTargetMs}})
	if err != nil {
		return fmt.Errorf("freshness chart %s: target: %w", path, err)
	}
	target.Color = color.RGBA{R: 200, G: 40, B: 40, A: 255}
	target.Width = vg.Points(1)
	target.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
	p.Add(target)
	p.Legend.Add(fmt.Sprintf("target: t3 p99 < %d ms through three levels", FreshnessTargetMs), target)
	p.Legend.Top = true
	// Room above the highest line for the legend.
	p.Y.Min, p.Y.Max = 0, top*1.45
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("freshness chart %s: %w", path, err)
	}
	return nil
}
