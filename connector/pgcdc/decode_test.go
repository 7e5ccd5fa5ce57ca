package pgcdc

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/jackc/pglogrepl"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestDecoder runs the scripts under testdata/ against the pgoutput
// decoder, a pure state machine fed hand-made messages:
//
//	layout               input: one table a line, "name upstream col:TYPE ...",
//	                     a key column's name ending in *
//	relation id=<n> name=<schema.table>
//	                     input: one column a line, "name oid"
//	begin lsn=<L>
//	insert rel=<n> new=<tuple> [at=<L>]
//	update rel=<n> [old=<tuple> | key=<tuple>] new=<tuple> [at=<L>]
//	delete rel=<n> (old=<tuple> | key=<tuple>) [at=<L>]
//	truncate rels=<n>,<n>...
//	commit lsn=<L> end=<L>
//
// A tuple is values separated by |, \N for NULL and \U for an unchanged
// TOASTed value; at is the WAL location the message came at (default
// 0/0). A command prints "ok", the error it got, or at commit the
// transaction: its positions, its rows as "table kind v|v|...", the
// tables it could not follow ("failed") and its bad row images with their
// positions.
func TestDecoder(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var dec *decoder
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "layout" {
				var tables []Table
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					f := strings.Fields(line)
					tb := Table{Name: f[0], Upstream: f[1]}
					for _, c := range f[2:] {
						name, typ, _ := strings.Cut(c, ":")
						if k, ok := strings.CutSuffix(name, "*"); ok {
							name = k
							tb.PrimaryKey = append(tb.PrimaryKey, k)
						}
						ty, err := types.ParseType(typ)
						if err != nil {
							t.Fatal(err)
						}
						tb.Columns = append(tb.Columns, catalog.Column{Name: name, Type: ty})
					}
					tables = append(tables, tb)
				}
				l, err := NewLayout(tables)
				if err != nil {
					return "error: " + err.Error()
				}
				dec = newDecoder(l)
				return "ok"
			}
			msg := message(t, d)
			var at uint64
			if d.HasArg("at") {
				var v string
				d.ScanArgs(t, "at", &v)
				l, err := pglogrepl.ParseLSN(v)
				if err != nil {
					t.Fatal(err)
				}
				at = uint64(l)
			}
			txn, err := dec.Step(msg, at)
			if err != nil {
				return "error: " + err.Error()
			}
			if txn == nil {
				return "ok"
			}
			var b strings.Builder
			fmt.Fprintf(&b, "txn %s..%s\n", pglogrepl.LSN(txn.CommitLSN), pglogrepl.LSN(txn.EndLSN))
			for r := range txn.Chunk.Len() {
				tag := int(txn.Chunk.Datum(0, r).Int64())
				off, w := dec.layout.Span(tag)
				vals := make([]string, w)
				for j := range w {
					if v := txn.Chunk.Datum(off+j, r); v.IsNull() {
						vals[j] = "NULL"
					} else {
						vals[j] = types.FormatText(v, time.UTC)
					}
				}
				fmt.Fprintf(&b, "%s %s %s\n", dec.layout.Table(tag).Name, txn.Chunk.Kind(r), strings.Join(vals, "|"))
			}
			for _, f := range txn.Failed {
				fmt.Fprintf(&b, "failed %s: %v\n", dec.layout.Table(f.Table).Name, f.Err)
			}
			for _, bad := range txn.Bad {
				fmt.Fprintf(&b, "bad %s.%s position %s: %s: %v\n  raw %s\n", dec.layout.Table(bad.Table).Name, bad.Column,
					pglogrepl.LSN(bad.Position), bad.Where, bad.Err, bad.Raw)
			}
			return b.String()
		})
	})
}

// message builds the pglogrepl message a script command describes.
func message(t *testing.T, d *datadriven.TestData) pglogrepl.Message {
	arg := func(key string) string {
		var v string
		d.ScanArgs(t, key, &v)
		return v
	}
	lsn := func(key string) pglogrepl.LSN {
		l, err := pglogrepl.ParseLSN(arg(key))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	rel := func() uint32 {
		n, err := strconv.ParseUint(arg("rel"), 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(n)
	}
	tuple := func(key string) *pglogrepl.TupleData {
		if !d.HasArg(key) {
			return nil
		}
		td := &pglogrepl.TupleData{}
		for _, v := range strings.Split(arg(key), "|") {
			switch v {
			case `\N`:
				td.Columns = append(td.Columns, &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeNull})
			case `\U`:
				td.Columns = append(td.Columns, &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeToast})
			default:
				td.Columns = append(td.Columns, &pglogrepl.TupleDataColumn{DataType: pglogrepl.TupleDataTypeText, Data: []byte(v)})
			}
		}
		td.ColumnNum = uint16(len(td.Columns))
		return td
	}
	switch d.Cmd {
	case "relation":
		n, _ := strconv.ParseUint(arg("id"), 10, 32)
		schema, name, _ := strings.Cut(arg("name"), ".")
		m := &pglogrepl.RelationMessage{RelationID: uint32(n), Namespace: schema, RelationName: name}
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			oid, _ := strconv.ParseUint(f[1], 10, 32)
			m.Columns = append(m.Columns, &pglogrepl.RelationMessageColumn{Name: f[0], DataType: uint32(oid)})
		}
		m.ColumnNum = uint16(len(m.Columns))
		return m
	case "begin":
		return &pglogrepl.BeginMessage{FinalLSN: lsn("lsn")}
	case "commit":
		return &pglogrepl.CommitMessage{CommitLSN: lsn("lsn"), TransactionEndLSN: lsn("end")}
	case "insert":
		return &pglogrepl.InsertMessage{RelationID: rel(), Tuple: tuple("new")}
	case "update":
		m := &pglogrepl.UpdateMessage{RelationID: rel(), NewTuple: tuple("new")}
		if d.HasArg("old") {
			m.OldTupleType, m.OldTuple = pglogrepl.UpdateMessageTupleTypeOld, tuple("old")
		} else if d.HasArg("key") {
			m.OldTupleType, m.OldTuple = pglogrepl.UpdateMessageTupleTypeKey, tuple("key")
		}
		return m
	case "delete":
		m := &pglogrepl.DeleteMessage{RelationID: rel()}
		if d.HasArg("old") {
			m.OldTupleType, m.OldTuple = pglogrepl.DeleteMessageTupleTypeOld, tuple("old")
		} else {
			m.OldTupleType, m.OldTuple = pglogrepl.DeleteMessageTupleTypeKey, tuple("key")
		}
		return m
	case "truncate":
		m := &pglogrepl.TruncateMessage{}
		for _, s := range strings.Split(arg("rels"), ",") {
			n, _ := strconv.ParseUint(s, 10, 32)
			m.RelationIDs = append(m.RelationIDs, uint32(n))
		}
		m.RelationNum = uint32(len(m.RelationIDs))
		return m
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return nil
}
