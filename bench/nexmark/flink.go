package nexmark

// FlinkFigure is one row of the example result table that the Nexmark
// repository publishes for Flink 2.0 (github.com/nexmark/nexmark,
// GUIDE_V2.md, "Nexmark Benchmark Result"): events per second over all
// cores and the cores used. The run behind it is on another machine: 4
// worker nodes of 16 cores and 32 GB, 8 task managers of one slot
// (parallelism 8), RocksDB with incremental checkpoints every 30 s,
// MiniBatch on, 50M measured events after 150M of warm-up at 100K
// events/s offered.
type FlinkFigure struct {
	EventsPerSec float64
	Cores        float64
}

// PerCore is events per second per core, the figure to set beside
// Result.EventsPerCPUSec.
// It is 0 for a query without a published figure.
func (f FlinkFigure) PerCore() float64 {
	if f.Cores == 0 {
		return 0
	}
	return f.EventsPerSec / f.Cores
}

// FlinkFigures are the published Flink 2.0 figures by query (q6 is
// missing: Flink cannot run it).
var FlinkFigures = map[string]FlinkFigure{
	"q0":  {2.65e6, 7},
	"q1":  {2.86e6, 7.24},
	"q2":  {2.95e6, 7.13},
	"q3":  {1.9e6, 8.69},
	"q4":  {347.84e3, 12.33},
	"q5":  {920.4e3, 12.35},
	"q7":  {262.46e3, 11.45},
	"q8":  {2.08e6, 12.83},
	"q9":  {149.52e3, 10.86},
	"q10": {904.32e3, 6.81},
	"q11": {427.88e3, 9.29},
	"q12": {1.95e6, 10.03},
	"q13": {1.5e6, 7.97},
	"q14": {2.03e6, 7.83},
	"q15": {1.37e6, 8.16},
	"q16": {487.29e3, 10.77},
	"q17": {1.63e6, 10.15},
	"q18": {769.77e3, 11.77},
	"q19": {558.84e3, 13.09},
	"q20": {194.96e3, 10.98},
	"q21": {1.15e6, 7.81},
	"q22": {1.63e6, 7.7},
}
