package schema

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// MergeEngine names how records of one key combine (Paimon's merge-engine).
type MergeEngine string

// The merge engines.
const (
	Deduplicate   MergeEngine = "deduplicate"
	PartialUpdate MergeEngine = "partial-update"
	Aggregation   MergeEngine = "aggregation"
	FirstRow      MergeEngine = "first-row"
)

// Aggregate functions of the aggregation engine
// ("fields.<name>.aggregate-function").
const (
	AggSum              = "sum"
	AggMin              = "min"
	AggMax              = "max"
	AggLastValue        = "last_value"
	AggLastNonNullValue = "last_non_null_value" // the default, as in Paimon
)

// ChangelogProducer names how changelog files are made (Paimon's
// changelog-producer).
type ChangelogProducer string

// The changelog producers.
const (
	// ChangelogNone writes no changelog files; streaming readers of a
	// primary-key table then cannot be served.
	ChangelogNone ChangelogProducer = "none"
	// ChangelogInput stores the rows as written.
	ChangelogInput ChangelogProducer = "input"
	// ChangelogLookup (the default for primary-key tables) looks up each
	// changed key's value before the epoch and emits exact -U/+U, +I and -D
	// per epoch.
	ChangelogLookup ChangelogProducer = "lookup"
)

// Options are the parsed table options. Keys follow Paimon's names.
type Options struct {
	// Buckets ("bucket", default 1) is the number of buckets of a
	// primary-key table; a key's bucket is its hash modulo Buckets.
	Buckets int
	// MergeEngine ("merge-engine", default deduplicate).
	MergeEngine MergeEngine
	// Aggregates maps a value column to its aggregate function
	// ("fields.<name>.aggregate-function"); columns not listed use
	// last_non_null_value.
	Aggregates map[string]string
	// ChangelogProducer ("changelog-producer", default lookup for
	// primary-key tables, input for append tables).
	ChangelogProducer ChangelogProducer
	// WriteBufferRows ("write-buffer-rows", default 65536) is how many rows
	// a bucket buffers before it spills a sorted run to a level-0 file.
	WriteBufferRows int
	// TargetFileRows ("target-file-rows", default 1<<20) is the largest
	// number of rows compaction puts in one file.
	TargetFileRows int
	// NumLevels ("num-levels") is the number of levels, level 0
	// included. Its default is RunCountTrigger+1, as Paimon's
	// (CoreOptions.numLevels): universal compaction writes each merge of
	// small runs one level below the next run (mergetree.Pick), so with
	// fewer levels the lowest non-zero level soon has no free level
	// below it and absorbs every new level-0 run, and a table that grows
	// by small commits is rewritten over and over. Over 450 equal commits
	// 5 levels rewrite each byte 29 times and 6 levels 5 times; over 1,800,
	// 161 and 12 times (table/mergetree TestPickRewrites).
	NumLevels int
	// RunCountTrigger ("num-sorted-run.compaction-trigger", default 5):
	// more sorted runs than this in a bucket trigger compaction.
	RunCountTrigger int
	// SizeRatio ("compaction.size-ratio", percent, default 1).
	SizeRatio int
	// MaxSizeAmplification ("compaction.max-size-amplification-percent",
	// default 200).
	MaxSizeAmplification int
	// Compaction ("write-only" = false turns it off), default on.
	Compaction bool
	// RetainMin, RetainMax ("snapshot.num-retained.min", default 10;
	// "snapshot.num-retained.max", default 100) bound how many snapshots
	// expiration keeps.
	RetainMin, RetainMax int
	// TimeRetained ("snapshot.time-retained", default 1h): snapshots younger
	// than this are kept (down to RetainMin older ones are expired).
	TimeRetained time.Duration
	// CommitRetries ("commit.max-retries", default 10) bounds optimistic
	// commit retries.
	CommitRetries int
}

// intOptionMin is the least value of each whole-number option (0 when
// not listed): a table needs a bucket, a buffer and a file of one row at
// least, and two levels (level 0 and the one it compacts into).
var intOptionMin = map[string]int{
	"bucket": 1, "write-buffer-rows": 1, "target-file-rows": 1,
	"num-levels": 2, "num-sorted-run.compaction-trigger": 1,
	"snapshot.num-retained.min": 1, "snapshot.num-retained.max": 1,
}

// ParseOptions parses s.Options. Unknown engines, functions or bad numbers
// give an error wrapping base.ErrInvalidArgument naming the option, its
// value and the values it takes (option "merge-engine": "dedup" is not
// one of deduplicate, ...); the caller adds the table's name.
func ParseOptions(s *Schema) (Options, error) {
	o := Options{
		Buckets: 1, MergeEngine: Deduplicate, Aggregates: map[string]string{},
		WriteBufferRows: 65536, TargetFileRows: 1 << 20,
		RunCountTrigger: 5, SizeRatio: 1, MaxSizeAmplification: 200, Compaction: true,
		RetainMin: 10, RetainMax: 100, TimeRetained: time.Hour, CommitRetries: 10,
	}
	if s.HasPrimaryKey() {
		o.ChangelogProducer = ChangelogLookup
	} else {
		o.ChangelogProducer = ChangelogInput
	}
	bad := func(k, v, why string) error {
		return fmt.Errorf("option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
	ints := map[string]*int{
		"bucket": &o.Buckets, "write-buffer-rows": &o.WriteBufferRows, "target-file-rows": &o.TargetFileRows,
		"num-levels": &o.NumLevels, "num-sorted-run.compaction-trigger": &o.RunCountTrigger,
		"compaction.size-ratio": &o.SizeRatio, "compaction.max-size-amplification-percent": &o.MaxSizeAmplification,
		"snapshot.num-retained.min": &o.RetainMin, "snapshot.num-retained.max": &o.RetainMax,
		"commit.max-retries": &o.CommitRetries,
	}
	for _, k := range slices.Sorted(maps.Keys(s.Options)) {
		v := s.Options[k]
		if p, ok := ints[k]; ok {
			least := intOptionMin[k]
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < least {
				return o, bad(k, v, fmt.Sprintf("is not a whole number >= %d", least))
			}
			*p = n
			continue
		}
		switch {
		case k == "merge-engine":
			switch e := MergeEngine(v); e {
			case Deduplicate, PartialUpdate, Aggregation, FirstRow:
				o.MergeEngine = e
			default:
				return o, bad(k, v, fmt.Sprintf("is not one of %s, %s, %s, %s", Deduplicate, PartialUpdate, Aggregation, FirstRow))
			}
		case k == "changelog-producer":
			switch p := ChangelogProducer(v); p {
			case ChangelogNone, ChangelogInput, ChangelogLookup:
				o.ChangelogProducer = p
			default:
				return o, bad(k, v, fmt.Sprintf("is not one of %s, %s, %s", ChangelogNone, ChangelogInput, ChangelogLookup))
			}
		case k == "write-only":
			o.Compaction = v != "true"
		case k == "snapshot.time-retained":
			d, err := time.ParseDuration(v)
			if err != nil {
				return o, bad(k, v, "is not a duration (such as 30m or 1h)")
			}
			o.TimeRetained = d
		case strings.HasPrefix(k, "fields.") && strings.HasSuffix(k, ".aggregate-function"):
			col := strings.TrimSuffix(strings.TrimPrefix(k, "fields."), ".aggregate-function")
			i := s.Index(col)
			if i < 0 {
				return o, bad(k, v, fmt.Sprintf("names no column (column %q does not exist)", col))
			}
			switch v {
			case AggSum:
				if !s.Fields[i].Type.IsNumeric() {
					return o, bad(k, v, fmt.Sprintf("needs a numeric column, and %s is %s", col, s.Fields[i].Type))
				}
			case AggMin, AggMax, AggLastValue, AggLastNonNullValue:
			default:
				return o, bad(k, v, fmt.Sprintf("is not one of %s, %s, %s, %s, %s", AggSum, AggMin, AggMax, AggLastValue, AggLastNonNullValue))
			}
			o.Aggregates[col] = v
		}
	}
	if o.NumLevels == 0 {
		o.NumLevels = o.RunCountTrigger + 1
	}
	if o.RetainMin > o.RetainMax {
		// Paimon refuses this too: the min would silently win.
		return o, fmt.Errorf("option \"snapshot.num-retained.min\" (%d) is more than \"snapshot.num-retained.max\" (%d); the defaults are 10 and 100, so a max below 10 needs a min too: %w",
			o.RetainMin, o.RetainMax, base.ErrInvalidArgument)
	}
	if !s.HasPrimaryKey() && o.ChangelogProducer == ChangelogLookup {
		o.ChangelogProducer = ChangelogInput
	}
	if s.HasPrimaryKey() && o.MergeEngine == Aggregation {
		for _, f := range s.Fields {
			if fn := o.Aggregates[f.Name]; fn == AggSum && f.Type.Kind == types.KindNumeric {
				return o, bad("fields."+f.Name+".aggregate-function", fn, "over NUMERIC is not supported yet")
			}
		}
	}
	return o, nil
}
