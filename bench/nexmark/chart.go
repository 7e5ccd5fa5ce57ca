package nexmark

import (
	"fmt"
	"image/color"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Chart file names that WriteCharts writes.
const (
	ThroughputChart = "nexmark-throughput.png"
	DuckDBChart     = "nexmark-vs-duckdb.png"
)

// WriteCharts writes PNG charts of results into dir and returns their
// paths: ThroughputChart, thousands of events per CPU second of each
// measured query beside Flink's published events per second per core
// (FlinkFigures, from another machine, and labelled so); and, when the
// results hold DuckDB times, DuckDBChart, strata_seconds / duckdb_seconds
// per query. title is the charts' subtitle (the run's machine and size).
func WriteCharts(dir, title string, results []Result) ([]string, error) {
	var names []string
	var strata, flink, ratio plotter.Values
	var ratioNames []string
	for _, r := range results {
		if r.Status != StatusOK && r.Status != StatusMismatch {
			continue
		}
		names = append(names, r.Query)
		strata = append(strata, r.EventsPerCPUSec/1e3)
		flink = append(flink, FlinkFigures[r.Query].PerCore()/1e3)
		if r.DuckDBSeconds > 0 {
			ratioNames = append(ratioNames, r.Query)
			ratio = append(ratio, r.StrataOverDuckDB)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("nexmark bench: no measured query to chart")
	}
	var out []string
	p := plot.New()
	p.Title.Text = "Nexmark: thousand events per CPU second\n" + title
	p.Y.Label.Text = "K events / s / core"
	w := vg.Points(9)
	a, err := plotter.NewBarChart(strata, w)
	if err != nil {
		return nil, err
	}
	a.Color = color.RGBA{R: 40, G: 100, B: 200, A: 255}
	a.Offset = -w / 2
	b, err := plotter.NewBarChart(flink, w)
	if err != nil {
		return nil, err
	}
	b.Color = color.RGBA{R: 200, G: 200, B: 200, A: 255}
	b.Offset = w / 2
	p.Add(a, b)
	p.Legend.Add("Strata, this machine (events / CPU s)", a)
	p.Legend.Add("Flink 2.0, published, another machine (events / s / core)", b)
	p.Legend.Top = true
	p.NominalX(names...)
	// Half a slot beside the first and the last query, so that their
	// bars are not drawn on the chart's edges.
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	path := filepath.Join(dir, ThroughputChart)
	if err := p.Save(chartWidth(len(names)), 4.5*vg.Inch, path); err != nil {
		return nil, fmt.Errorf("nexmark bench: chart %s: %w", path, err)
	}
	out = append(out, path)
	if len(ratio) == 0 {
		return out, nil
	}
	p = plot.New()
	p.Title.Text = "Nexmark: Strata seconds / DuckDB batch seconds\n" + title
	p.Y.Label.Text = "strata_seconds / duckdb_seconds"
	c, err := plotter.NewBarChart(ratio, w*2)
	if err != nil {
		return nil, err
	}
	c.Color = color.RGBA{R: 40, G: 100, B: 200, A: 255}
	p.Add(c)
	p.NominalX(ratioNames...)
	p.X.Min, p.X.Max = -0.5, float64(len(ratioNames))-0.5
	path = filepath.Join(dir, DuckDBChart)
	if err := p.Save(chartWidth(len(ratioNames)), 4.5*vg.Inch, path); err != nil {
		return nil, fmt.Errorf("nexmark bench: chart %s: %w", path, err)
	}
	return append(out, path), nil
}

// chartWidth is the width of a chart of n queries: half an inch a query
// beside the axis, and at least 6 inches, so that the legend of a chart
// of a few queries is not cut off.
func chartWidth(n int) vg.Length {
	return max(6*vg.Inch, 3*vg.Inch+vg.Length(n)*vg.Inch/2)
}
