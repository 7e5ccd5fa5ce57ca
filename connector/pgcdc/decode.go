package pgcdc

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// ErrUnsupported marks changes the source refuses: TRUNCATE, a column of an
// unsupported type, an unchanged TOASTed value that cannot be filled in.
var ErrUnsupported = errors.New("postgres-cdc: unsupported change")

// Txn is one Postgres transaction as the Stream emits it: its rows in the
// union layout, in the order Postgres applied them, and its place in the
// WAL.
type Txn struct {
	// CommitLSN is where the transaction's commit record starts (0 for the
	// initial snapshot); EndLSN is where it ends: the position after the
	// transaction (doc.go, Positions).
	CommitLSN, EndLSN uint64
	Chunk             *types.Chunk
	// Bad are the row images left out of Chunk because a value does not
	// fit its Strata column, in WAL order (doc.go, Bad values). The
	// Stream applies each one's table's error mode when it hands the
	// transaction out.
	Bad []BadRow
	// Failed are the tables whose changes in the transaction the decoder
	// could not read at all (doc.go, Quarantine): a Relation message
	// whose columns no longer feed the table, a TRUNCATE, an unchanged
	// TOASTed value it cannot fill in, a change without its row. Their
	// changes are left out of Chunk; the Stream quarantines each table
	// from this transaction on, whatever its error mode.
	Failed []TableFailure
}

// TableFailure is a table the decoder could not follow in a transaction:
// the table's index in the layout and why, naming the table and column.
type TableFailure struct {
	Table int
	Err   error
}

// BadRow is one row image a transaction leaves out of its chunk: a value
// of it does not fit the declared Strata column (a varchar(n) or char(n)
// overflow, a numeric beyond the declared precision, an integer out of a
// smaller integer's range, NaN or infinity where the type has none, text
// that does not parse). The decoder only records it; what happens to it
// is the error mode of its table (Table.Errors).
type BadRow struct {
	// Table is the row's table, as its index in the layout; Column the
	// first Strata column whose value does not fit.
	Table  int
	Column string
	// Position is the row image's stable place in the WAL, the same on
	// every replay (doc.go, Bad values): the LSN of the change's WAL
	// record plus the index of the image among those that record gives,
	// or SnapshotPosition(n) for row n of the initial snapshot.
	Position uint64
	// Where names the table, the column, the change and the commit LSN:
	// "table t column c: insert at 0/1A2B3C8 in the transaction committing
	// at 0/1A2B400".
	Where string
	// Raw is the row as Postgres sent it: a JSON object of the table's
	// declared columns, each its text value or null.
	Raw []byte
	// Err is the parse error (types.ParseText), naming the value and type.
	Err error
}

// snapshotBase sets the positions of the initial snapshot's rows apart
// from WAL locations: a WAL location reaches 2^62 only after 4 EiB of
// WAL.
const snapshotBase = uint64(1) << 62

// SnapshotPosition is the Position of a BadRow that is row n (from 0, in
// the order the snapshot read the tables) of the initial snapshot.
func SnapshotPosition(n uint64) uint64 { return snapshotBase + n }

// rawRow encodes a row's text values (nil for NULL) as a JSON object of
// names, in the order given.
func rawRow(names []string, vals [][]byte) []byte {
	b := []byte{'{'}
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, []byte(n))
		b = append(b, ':')
		if vals[i] == nil {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, vals[i])
		}
	}
	return append(b, '}')
}

// appendJSONString appends v as a JSON string.
func appendJSONString(b, v []byte) []byte {
	q, err := json.Marshal(string(v))
	if err != nil { // a Go string always marshals
		panic(err)
	}
	return append(b, q...)
}

// relation is what the decoder knows of one upstream relation from its
// latest Relation message.
type relation struct {
	table int   // index in the layout, or -1 for a table the source does not map
	cols  []int // cols[j]: the relation's column feeding the table's column j
	name  string
	// failed is why the relation cannot feed its table (a declared column
	// gone, or of a type that does not fit): its changes fail the table.
	failed error
}

// decoder turns pgoutput messages (protocol version 1) into transactions.
// It is a pure state machine: Step takes one message and returns the
// transaction it completed, if any; it does no I/O.
type decoder struct {
	layout   *Layout
	upstream map[string]int // "schema.table" -> index
	rels     map[uint32]*relation
	// Set between Begin and Commit.
	open   bool
	commit uint64
	chunk  *types.Chunk
	bad    []BadRow
	failed []TableFailure
	// at is the WAL location of the message being stepped; images counts
	// the row images given so far by the change record at lastAt.
	at, lastAt uint64
	images     uint64
	row        types.Row // scratch of the layout's width
	raw        [][]byte  // scratch: a row's text values
}

func newDecoder(l *Layout) *decoder {
	d := &decoder{layout: l, upstream: map[string]int{}, rels: map[uint32]*relation{}, row: make(types.Row, l.Width())}
	for i := range l.Tables() {
		s, t := l.Table(i).schemaTable()
		d.upstream[s+"."+t] = i
	}
	return d
}

// Step applies one message, which the server sent at WAL location at (the
// XLogData's WALStart: for a change, the start of its WAL record). It
// returns a transaction at its Commit, and an error for a protocol
// violation (base.ErrCorruption). A value that does not fit its column
// is no error here: its row image goes to Txn.Bad; a change of one table
// it cannot represent (wrapping ErrUnsupported or base.ErrInvalidArgument,
// naming the table, column and commit LSN) goes to Txn.Failed, and the
// transaction's other tables go on.
func (d *decoder) Step(msg pglogrepl.Message, at uint64) (*Txn, error) {
	d.at = at
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		return nil, d.relation(m)
	case *pglogrepl.BeginMessage:
		if d.open {
			return nil, fmt.Errorf("postgres-cdc: Begin of the transaction committing at %s inside another: %w", m.FinalLSN, base.ErrCorruption)
		}
		d.open, d.commit = true, uint64(m.FinalLSN)
		d.chunk, d.bad, d.failed = types.NewChunk(d.layout.types, 16), nil, nil
		return nil, nil
	case *pglogrepl.CommitMessage:
		if !d.open {
			return nil, fmt.Errorf("postgres-cdc: Commit at %s without a Begin: %w", m.CommitLSN, base.ErrCorruption)
		}
		if uint64(m.CommitLSN) != d.commit {
			return nil, fmt.Errorf("postgres-cdc: Commit at %s ends the transaction that Began to commit at %s: %w", m.CommitLSN, pglogrepl.LSN(d.commit), base.ErrCorruption)
		}
		t := &Txn{CommitLSN: d.commit, EndLSN: uint64(m.TransactionEndLSN), Chunk: d.chunk, Bad: d.bad, Failed: d.failed}
		if len(d.failed) > 0 {
			// A failed table's changes of this transaction, even those
			// before its failure, stay out: the table stops before it.
			t.Chunk = dropTables(t.Chunk, d.failed)
		}
		d.open, d.chunk, d.bad, d.failed = false, nil, nil, nil
		return t, nil
	case *pglogrepl.InsertMessage:
		rel, err := d.change(m.RelationID, "insert")
		if err != nil || rel == nil {
			return nil, err
		}
		return nil, d.emit(rel, "insert", types.Insert, m.Tuple, nil)
	case *pglogrepl.UpdateMessage:
		rel, err := d.change(m.RelationID, "update")
		if err != nil || rel == nil {
			return nil, err
		}
		switch m.OldTupleType {
		case pglogrepl.UpdateMessageTupleTypeOld: // REPLICA IDENTITY FULL
			if err := d.emit(rel, "update (old row)", types.UpdateBefore, m.OldTuple, nil); err != nil {
				return nil, err
			}
			return nil, d.emit(rel, "update (new row)", types.UpdateAfter, m.NewTuple, m.OldTuple)
		case pglogrepl.UpdateMessageTupleTypeKey: // the key changed
			if err := d.emit(rel, "update (old key)", types.Delete, m.OldTuple, nil); err != nil {
				return nil, err
			}
			return nil, d.emit(rel, "update (new row)", types.Insert, m.NewTuple, nil)
		default: // the key did not change: an upsert
			bad := len(d.bad)
			if err := d.emit(rel, "update", types.UpdateAfter, m.NewTuple, nil); err != nil {
				return nil, err
			}
			if len(d.bad) > bad {
				// The new row is bad: its key leaves the table rather
				// than keep the version before (invariant
				// bad-rows-absent).
				d.keyDelete(rel, m.NewTuple)
			}
			return nil, nil
		}
	case *pglogrepl.DeleteMessage:
		rel, err := d.change(m.RelationID, "delete")
		if err != nil || rel == nil {
			return nil, err
		}
		return nil, d.emit(rel, "delete", types.Delete, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if rel := d.rels[id]; rel != nil && rel.table >= 0 {
				d.fail(rel.table, fmt.Errorf("postgres-cdc: TRUNCATE of %s (table %s) in the transaction committing at %s is not supported: %w",
					rel.name, d.layout.Table(rel.table).Name, pglogrepl.LSN(d.commit), ErrUnsupported))
			}
		}
		return nil, nil
	case *pglogrepl.TypeMessage, *pglogrepl.OriginMessage, *pglogrepl.LogicalDecodingMessage:
		return nil, nil
	}
	return nil, fmt.Errorf("postgres-cdc: unexpected pgoutput message %s: %w", msg.Type(), base.ErrCorruption)
}

// relation records a Relation message, mapping the Strata table's columns
// to the relation's by name and checking their types.
func (d *decoder) relation(m *pglogrepl.RelationMessage) error {
	name := m.Namespace + "." + m.RelationName
	i, ok := d.upstream[name]
	if !ok {
		d.rels[m.RelationID] = &relation{table: -1, name: name}
		return nil
	}
	t := d.layout.Table(i)
	byName := map[string]int{}
	for k, c := range m.Columns {
		byName[c.Name] = k
	}
	rel := &relation{table: i, name: name, cols: make([]int, len(t.Columns))}
	d.rels[m.RelationID] = rel
	for j, c := range t.Columns {
		k, ok := byName[c.Name]
		if !ok {
			rel.failed = fmt.Errorf("postgres-cdc: table %s column %s: %s has no such column: %w", t.Name, c.Name, name, base.ErrInvalidArgument)
			return nil
		}
		if err := checkType(t.Name, c.Name, m.Columns[k].DataType, "", false, c.Type); err != nil {
			rel.failed = err
			return nil
		}
		rel.cols[j] = k
	}
	return nil
}

// fail records that table cannot be followed in the open transaction
// (its first failure only).
func (d *decoder) fail(table int, err error) {
	for _, f := range d.failed {
		if f.Table == table {
			return
		}
	}
	d.failed = append(d.failed, TableFailure{Table: table, Err: err})
}

// failedIn tells whether table already failed in the open transaction.
func (d *decoder) failedIn(table int) bool {
	for _, f := range d.failed {
		if f.Table == table {
			return true
		}
	}
	return false
}

// dropTables returns c without the rows of the failed tables.
func dropTables(c *types.Chunk, failed []TableFailure) *types.Chunk {
	out := types.NewChunk(chunkTypes(c), c.Len())
	for r := range c.Len() {
		tag := int(c.Cols[0].Ints[r])
		if !slices.ContainsFunc(failed, func(f TableFailure) bool { return f.Table == tag }) {
			out.Append(c.Kinds[r], c.Row(r))
		}
	}
	return out
}

// chunkTypes returns the column types of c.
func chunkTypes(c *types.Chunk) []types.Type {
	out := make([]types.Type, len(c.Cols))
	for i := range c.Cols {
		out[i] = c.Cols[i].Type
	}
	return out
}

// change returns the relation a change applies to, nil for a relation the
// source does not map.
func (d *decoder) change(id uint32, what string) (*relation, error) {
	if !d.open {
		return nil, fmt.Errorf("postgres-cdc: %s outside a transaction: %w", what, base.ErrCorruption)
	}
	rel := d.rels[id]
	if rel == nil {
		return nil, fmt.Errorf("postgres-cdc: %s of relation %d before its Relation message: %w", what, id, base.ErrCorruption)
	}
	if rel.table < 0 {
		return nil, nil
	}
	if rel.failed != nil {
		d.fail(rel.table, rel.failed)
		return nil, nil
	}
	if d.failedIn(rel.table) {
		return nil, nil // its table stops before this transaction
	}
	return rel, nil
}

// emit appends the row image tup describes (what: the change, for
// messages), reading unchanged TOASTed values from old when given. An
// image with a value that does not fit its column goes to d.bad instead
// (doc.go, Bad values); every image, bad or not, takes the next position
// of its change record.
func (d *decoder) emit(rel *relation, what string, kind types.RowKind, tup, old *pglogrepl.TupleData) error {
	t := d.layout.Table(rel.table)
	if d.failedIn(rel.table) {
		return nil
	}
	if tup == nil {
		d.fail(rel.table, fmt.Errorf("postgres-cdc: table %s: a %s without its row in the transaction committing at %s (is the replica identity NOTHING?): %w",
			t.Name, kind, pglogrepl.LSN(d.commit), ErrUnsupported))
		return nil
	}
	if d.at != d.lastAt {
		d.lastAt, d.images = d.at, 0
	}
	pos := d.at + d.images
	d.images++
	for k := range d.row {
		d.row[k] = types.Null
	}
	d.row[0] = types.NewInt32(int32(rel.table))
	off, _ := d.layout.Span(rel.table)
	d.raw = d.raw[:0]
	badCol, badErr := "", error(nil)
	for j, c := range t.Columns {
		k := rel.cols[j]
		if k >= len(tup.Columns) {
			return fmt.Errorf("postgres-cdc: table %s column %s: the row has %d columns: %w", t.Name, c.Name, len(tup.Columns), base.ErrCorruption)
		}
		col := tup.Columns[k]
		if col.DataType == pglogrepl.TupleDataTypeToast {
			if old == nil || k >= len(old.Columns) || old.Columns[k].DataType == pglogrepl.TupleDataTypeToast {
				d.fail(rel.table, fmt.Errorf("postgres-cdc: table %s column %s: an unchanged TOASTed value in the transaction committing at %s cannot be read; set REPLICA IDENTITY FULL on %s: %w",
					t.Name, c.Name, pglogrepl.LSN(d.commit), rel.name, ErrUnsupported))
				return nil
			}
			col = old.Columns[k]
		}
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
			d.raw = append(d.raw, nil)
		case pglogrepl.TupleDataTypeText:
			d.raw = append(d.raw, col.Data)
			if badErr != nil {
				continue
			}
			v, err := types.ParseText(c.Type, string(col.Data), time.UTC)
			if err != nil {
				badCol, badErr = c.Name, err
				continue
			}
			d.row[off+j] = v
		default:
			return fmt.Errorf("postgres-cdc: table %s column %s: tuple data of kind %q: %w", t.Name, c.Name, col.DataType, base.ErrCorruption)
		}
	}
	if badErr != nil {
		d.bad = append(d.bad, BadRow{Table: rel.table, Column: badCol, Position: pos,
			Where: fmt.Sprintf("table %s column %s: %s at %s in the transaction committing at %s",
				t.Name, badCol, what, pglogrepl.LSN(d.at), pglogrepl.LSN(d.commit)),
			Raw: rawRow(columnNames(t), d.raw), Err: badErr})
		return nil
	}
	d.chunk.Append(kind, d.row)
	return nil
}

// columnNames returns the names of t's columns.
func columnNames(t Table) []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// keyDelete appends a -D of the key of tup, a bad upsert image (doc.go,
// Bad values), other columns NULL as in a delete under a key identity. It
// appends nothing when the table has no primary key or a key value does
// not parse (then no version of that key was ever emitted).
func (d *decoder) keyDelete(rel *relation, tup *pglogrepl.TupleData) {
	t := d.layout.Table(rel.table)
	if len(t.PrimaryKey) == 0 {
		return
	}
	for k := range d.row {
		d.row[k] = types.Null
	}
	d.row[0] = types.NewInt32(int32(rel.table))
	off, _ := d.layout.Span(rel.table)
	for j, c := range t.Columns {
		if !slices.Contains(t.PrimaryKey, c.Name) {
			continue
		}
		col := tup.Columns[rel.cols[j]]
		if col.DataType != pglogrepl.TupleDataTypeText {
			return
		}
		v, err := types.ParseText(c.Type, string(col.Data), time.UTC)
		if err != nil {
			return
		}
		d.row[off+j] = v
	}
	d.chunk.Append(types.Delete, d.row)
}
