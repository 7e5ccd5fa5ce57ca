package pgcdc

import (
	"errors"
	"fmt"
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
}

// relation is what the decoder knows of one upstream relation from its
// latest Relation message.
type relation struct {
	table int   // index in the layout, or -1 for a table the source does not map
	cols  []int // cols[j]: the relation's column feeding the table's column j
	name  string
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
	row    types.Row // scratch of the layout's width
}

func newDecoder(l *Layout) *decoder {
	d := &decoder{layout: l, upstream: map[string]int{}, rels: map[uint32]*relation{}, row: make(types.Row, l.Width())}
	for i := range l.Tables() {
		s, t := l.Table(i).schemaTable()
		d.upstream[s+"."+t] = i
	}
	return d
}

// Step applies one message. It returns a transaction at its Commit, and
// an error for messages it refuses (wrapping ErrUnsupported or
// base.ErrInvalidArgument for changes it cannot represent,
// base.ErrCorruption for a protocol violation), naming the table, column
// and commit LSN.
func (d *decoder) Step(msg pglogrepl.Message) (*Txn, error) {
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		return nil, d.relation(m)
	case *pglogrepl.BeginMessage:
		if d.open {
			return nil, fmt.Errorf("postgres-cdc: Begin of the transaction committing at %s inside another: %w", m.FinalLSN, base.ErrCorruption)
		}
		d.open, d.commit = true, uint64(m.FinalLSN)
		d.chunk = types.NewChunk(d.layout.types, 16)
		return nil, nil
	case *pglogrepl.CommitMessage:
		if !d.open {
			return nil, fmt.Errorf("postgres-cdc: Commit at %s without a Begin: %w", m.CommitLSN, base.ErrCorruption)
		}
		if uint64(m.CommitLSN) != d.commit {
			return nil, fmt.Errorf("postgres-cdc: Commit at %s ends the transaction that Began to commit at %s: %w", m.CommitLSN, pglogrepl.LSN(d.commit), base.ErrCorruption)
		}
		t := &Txn{CommitLSN: d.commit, EndLSN: uint64(m.TransactionEndLSN), Chunk: d.chunk}
		d.open, d.chunk = false, nil
		return t, nil
	case *pglogrepl.InsertMessage:
		rel, err := d.change(m.RelationID, "insert")
		if err != nil || rel == nil {
			return nil, err
		}
		return nil, d.emit(rel, types.Insert, m.Tuple, nil)
	case *pglogrepl.UpdateMessage:
		rel, err := d.change(m.RelationID, "update")
		if err != nil || rel == nil {
			return nil, err
		}
		switch m.OldTupleType {
		case pglogrepl.UpdateMessageTupleTypeOld: // REPLICA IDENTITY FULL
			if err := d.emit(rel, types.UpdateBefore, m.OldTuple, nil); err != nil {
				return nil, err
			}
			return nil, d.emit(rel, types.UpdateAfter, m.NewTuple, m.OldTuple)
		case pglogrepl.UpdateMessageTupleTypeKey: // the key changed
			if err := d.emit(rel, types.Delete, m.OldTuple, nil); err != nil {
				return nil, err
			}
			return nil, d.emit(rel, types.Insert, m.NewTuple, nil)
		default: // the key did not change: an upsert
			return nil, d.emit(rel, types.UpdateAfter, m.NewTuple, nil)
		}
	case *pglogrepl.DeleteMessage:
		rel, err := d.change(m.RelationID, "delete")
		if err != nil || rel == nil {
			return nil, err
		}
		return nil, d.emit(rel, types.Delete, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		for _, id := range m.RelationIDs {
			if rel := d.rels[id]; rel != nil && rel.table >= 0 {
				return nil, fmt.Errorf("postgres-cdc: TRUNCATE of %s (table %s) in the transaction committing at %s is not supported: %w",
					rel.name, d.layout.Table(rel.table).Name, pglogrepl.LSN(d.commit), ErrUnsupported)
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
	for j, c := range t.Columns {
		k, ok := byName[c.Name]
		if !ok {
			return fmt.Errorf("postgres-cdc: table %s column %s: %s has no such column: %w", t.Name, c.Name, name, base.ErrInvalidArgument)
		}
		if err := checkType(t.Name, c.Name, m.Columns[k].DataType, "", false, c.Type); err != nil {
			return err
		}
		rel.cols[j] = k
	}
	d.rels[m.RelationID] = rel
	return nil
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
	return rel, nil
}

// emit appends the row tup describes, reading unchanged TOASTed values
// from old when given.
func (d *decoder) emit(rel *relation, kind types.RowKind, tup, old *pglogrepl.TupleData) error {
	t := d.layout.Table(rel.table)
	if tup == nil {
		return fmt.Errorf("postgres-cdc: table %s: a %s without its row in the transaction committing at %s (is the replica identity NOTHING?): %w",
			t.Name, kind, pglogrepl.LSN(d.commit), ErrUnsupported)
	}
	for k := range d.row {
		d.row[k] = types.Null
	}
	d.row[0] = types.NewInt32(int32(rel.table))
	off, _ := d.layout.Span(rel.table)
	for j, c := range t.Columns {
		k := rel.cols[j]
		if k >= len(tup.Columns) {
			return fmt.Errorf("postgres-cdc: table %s column %s: the row has %d columns: %w", t.Name, c.Name, len(tup.Columns), base.ErrCorruption)
		}
		col := tup.Columns[k]
		if col.DataType == pglogrepl.TupleDataTypeToast {
			if old == nil || k >= len(old.Columns) || old.Columns[k].DataType == pglogrepl.TupleDataTypeToast {
				return fmt.Errorf("postgres-cdc: table %s column %s: an unchanged TOASTed value in the transaction committing at %s cannot be read; set REPLICA IDENTITY FULL on %s: %w",
					t.Name, c.Name, pglogrepl.LSN(d.commit), rel.name, ErrUnsupported)
			}
			col = old.Columns[k]
		}
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeText:
			v, err := types.ParseText(c.Type, string(col.Data), time.UTC)
			if err != nil {
				return fmt.Errorf("postgres-cdc: table %s column %s in the transaction committing at %s: %w", t.Name, c.Name, pglogrepl.LSN(d.commit), err)
			}
			d.row[off+j] = v
		default:
			return fmt.Errorf("postgres-cdc: table %s column %s: tuple data of kind %q: %w", t.Name, c.Name, col.DataType, base.ErrCorruption)
		}
	}
	d.chunk.Append(kind, d.row)
	return nil
}
