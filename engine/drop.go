package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// A DROP statement is one catalog change ([drop-atomic], doc.go): every
// table and view it names, every view and sink that depends on them
// (with CASCADE) and every job that writes one of them leave the catalog
// in a single meta.Change, so a crash at any instant leaves all of them
// in place, their jobs resuming from their checkpoints, or none.
//
// The statement runs in steps (applyDrop):
//
//  1. plan: planDrop computes, from one catalog version and without I/O,
//     the objects and jobs that go and the jobs that come (a table's DML
//     job back when the sink writing it goes; a CDC source's job rebuilt
//     without the tables that go);
//  2. intent: a drop intent naming the tables and jobs that go is made
//     durable (dropintent.go);
//  3. stop: the jobs that go, and the CDC jobs that are rebuilt, stop;
//  4. commit: one meta.Change;
//  5. cleanup: the tables' files, the jobs' checkpoints and state go;
//     the jobs the change registered start; the intent goes.
//
// A crash before 4 leaves the catalog as it was: the next start runs
// every job of it from its checkpoints, and the intent names only
// objects the catalog still holds, so replaying it removes nothing. A
// crash after 4 leaves the catalog without the objects: the next start
// replays the intent, which removes what step 5 had not removed yet
// (every removal is idempotent), and starts the registered jobs with the
// rest of the catalog's. An error (not a crash) before 4 starts the
// stopped jobs again.
//
// Dropped design: one change per object, dependents first, which is what
// DROP ... CASCADE did before; a crash in its middle left some
// dependents dropped and the named object in place.

// dropPlan is what one DROP statement removes and registers; planDrop
// makes it, applyDrop carries it out.
type dropPlan struct {
	// tables are the tables and views that go: the named ones in the
	// statement's order, then their dependents breadth first.
	tables []catalog.ObjectName
	// jobs are the jobs that go: the writers of tables (other than a CDC
	// source's job) and the sinks that read one of tables or write one,
	// in the order found.
	jobs []string
	// dmlBack are tables that stay while the sink writing them goes:
	// their DML job comes back, over a fresh log.
	dmlBack []catalog.ObjectName
	// sources are the CDC sources some of whose tables go: each one's
	// job is replaced by one feeding the tables left, or goes when none
	// is left.
	sources []catalog.ObjectName
	// change is the one catalog change: jobs, the CDC sources' jobs
	// included, then tables dropped; the DML jobs back and the rebuilt
	// CDC jobs registered.
	change meta.Change
}

// empty reports whether the statement drops nothing (every name missing
// under IF EXISTS).
func (p dropPlan) empty() bool { return len(p.tables) == 0 && len(p.jobs) == 0 }

// planDrop plans DROP what names (what is "table" or "view"; the names
// in the statement's order) on catalog cat. A missing name is an error
// (42P01) unless ifExists, an object of the other kind is 42809, and
// without cascade an object that depends on a named one and is not named
// itself is 2BP01 naming every such object (as is a sink writing a named
// table). planDrop does no I/O.
func planDrop(cat *catalog.Catalog, what string, names []catalog.ObjectName, ifExists, cascade bool) (dropPlan, error) {
	var p dropPlan
	dropped := map[catalog.ObjectName]bool{}
	for _, n := range names {
		t, err := cat.Table(n)
		if err != nil {
			if ifExists {
				continue
			}
			// PostgreSQL names the kind the statement named: DROP
			// MATERIALIZED VIEW says materialized view.
			noun := what
			if what == "view" {
				noun = "materialized view"
			}
			return dropPlan{}, sqlerr.New(sqlerr.UndefinedTable, "%s %q does not exist", noun, n.Name)
		}
		switch {
		case what == "view" && t.Kind != catalog.KindView:
			return dropPlan{}, sqlerr.New(sqlerr.WrongObjectType, "%q is not a materialized view", n.Name)
		case what == "table" && t.Kind != catalog.KindTable:
			return dropPlan{}, sqlerr.New(sqlerr.WrongObjectType, "%q is not a table; use DROP MATERIALIZED VIEW", n.Name)
		}
		if !dropped[n] {
			dropped[n] = true
			p.tables = append(p.tables, n)
		}
	}
	jobs := cat.Jobs() // sorted by name
	if !cascade {
		for _, n := range p.tables {
			for _, j := range jobs {
				// A sink writing the table depends on it as much as a
				// reader.
				if isSinkJob(j) && slices.Contains(j.Writes, n) {
					return dropPlan{}, sqlerr.New(sqlerr.DependentObjectsStillExist,
						"cannot drop %s %s because sink %s writes it (use DROP ... CASCADE to drop the sink too)", what, n.Name, j.Options[jobOptSink])
				}
			}
		}
		for _, n := range p.tables {
			// Every dependent is named, transitively, as PostgreSQL
			// lists them all; one the statement drops too is none.
			ds := slices.DeleteFunc(dependentsOf(cat, n), func(d dependent) bool { return dropped[d.obj] })
			if err := dependentsError(what, n, ds); err != nil {
				return dropPlan{}, err
			}
		}
	}
	goes := map[string]bool{}
	addJob := func(name string) {
		if !goes[name] {
			goes[name] = true
			p.jobs = append(p.jobs, name)
		}
	}
	// Breadth first from the named objects: a sink that reads or writes
	// one goes; a view job that reads one takes its view along (without
	// CASCADE only views the statement names are left to find).
	var sinks []catalog.Job
	for i := 0; i < len(p.tables); i++ {
		n := p.tables[i]
		for _, j := range jobs {
			reads, writes := slices.Contains(j.Reads, n), slices.Contains(j.Writes, n)
			switch {
			case isSinkJob(j) && (reads || writes):
				if !goes[j.Name] {
					addJob(j.Name)
					sinks = append(sinks, j)
				}
			case reads:
				for _, w := range j.Writes {
					if !dropped[w] {
						dropped[w] = true
						p.tables = append(p.tables, w)
					}
				}
			}
		}
	}
	if p.empty() {
		return p, nil
	}
	// The writers of what goes go too, but a CDC source's job, which
	// feeds several tables, is rebuilt for the tables left.
	sources := map[catalog.ObjectName]bool{}
	for _, n := range p.tables {
		t, err := cat.Table(n)
		if err != nil {
			panic(fmt.Sprintf("engine: planDrop: table %s of the plan is not in the catalog it came from", n))
		}
		src := t.Options[OptionSource]
		if src == "" {
			continue
		}
		name, err := catalog.ParseObjectName(src)
		if err != nil {
			return dropPlan{}, err
		}
		if !sources[name] {
			sources[name] = true
			p.sources = append(p.sources, name)
		}
	}
	for _, j := range jobs {
		if goes[j.Name] || isCDCJob(j) || !slices.ContainsFunc(j.Writes, func(w catalog.ObjectName) bool { return dropped[w] }) {
			continue
		}
		if slices.ContainsFunc(j.Writes, func(w catalog.ObjectName) bool { return !dropped[w] }) {
			// Only a CDC source's job writes several tables; a job of
			// another kind that did would be refused here rather than
			// dropped with tables that stay (or crash the server).
			return dropPlan{}, sqlerr.New(sqlerr.FeatureNotSupported, "cannot drop only some of the tables job %s writes (%v)", j.Name, j.Writes)
		}
		addJob(j.Name)
	}
	p.change = meta.Change{DropJobs: slices.Clone(p.jobs), DropTables: slices.Clone(p.tables)}
	for _, k := range sinks {
		// A sink into a table that stays gives the table back to its DML
		// job, in the same change (a crash never leaves it without a
		// writer).
		if len(k.Writes) > 0 && !dropped[k.Writes[0]] {
			p.dmlBack = append(p.dmlBack, k.Writes[0])
			p.change.RegisterJobs = append(p.change.RegisterJobs, dmlJobDef(k.Writes[0]))
		}
	}
	for _, src := range p.sources {
		def := cdcJobDef(cat, src)
		def.Writes = slices.DeleteFunc(def.Writes, func(w catalog.ObjectName) bool { return dropped[w] })
		if _, err := cat.Job(def.Name); err == nil {
			p.change.DropJobs = append(p.change.DropJobs, def.Name)
		}
		if len(def.Writes) > 0 {
			p.change.RegisterJobs = append(p.change.RegisterJobs, def)
		}
	}
	return p, nil
}

// Drop drops a table or view (what = "table" or "view"); DropAll tells
// how.
func (e *Engine) Drop(ctx context.Context, what string, name catalog.ObjectName, ifExists, cascade bool) error {
	return e.DropAll(ctx, what, []catalog.ObjectName{name}, ifExists, cascade)
}

// DropAll drops the tables or views names (what = "table" or "view"),
// one DROP statement, in one catalog change ([drop-atomic]): each one's
// writing job stops, then the catalog entries go together, then the
// storage and checkpoints. Something that reads one of them (a view's
// job, a sink) and is not named makes DropAll fail unless cascade, which
// drops it along, transitively; a sink into a table that stays gives the
// table back to its DML job. With ifExists a missing name is skipped.
// The statement is checked whole before anything changes: an error
// drops nothing.
func (e *Engine) DropAll(ctx context.Context, what string, names []catalog.ObjectName, ifExists, cascade bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	return e.drop(ctx, what, names, ifExists, cascade)
}

// drop is DropAll with e.ddl held by the caller.
func (e *Engine) drop(ctx context.Context, what string, names []catalog.ObjectName, ifExists, cascade bool) error {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	p, err := planDrop(cat, what, names, ifExists, cascade)
	if err != nil || p.empty() {
		return err
	}
	return e.applyDrop(ctx, p)
}

// planDropSinks plans DROP SINK names: the sinks' jobs go, and a table a
// sink wrote gets its DML job back, in one change. A missing sink is an
// error (42704) unless ifExists. planDropSinks does no I/O.
func planDropSinks(cat *catalog.Catalog, names []catalog.ObjectName, ifExists bool) (dropPlan, error) {
	var p dropPlan
	for _, n := range names {
		def, err := cat.Job(sinkJobName(n))
		if err != nil {
			if ifExists {
				continue
			}
			return dropPlan{}, sqlerr.New(sqlerr.UndefinedObject, "sink %q does not exist", n.Name)
		}
		if slices.Contains(p.jobs, def.Name) {
			continue
		}
		p.jobs = append(p.jobs, def.Name)
		if len(def.Writes) > 0 { // a sink into a table
			p.dmlBack = append(p.dmlBack, def.Writes[0])
			p.change.RegisterJobs = append(p.change.RegisterJobs, dmlJobDef(def.Writes[0]))
		}
	}
	p.change.DropJobs = slices.Clone(p.jobs)
	return p, nil
}

// DropSink drops sink name; DropSinks tells how.
func (e *Engine) DropSink(ctx context.Context, name catalog.ObjectName, ifExists bool) error {
	return e.DropSinks(ctx, []catalog.ObjectName{name}, ifExists)
}

// DropSinks drops the sinks names (one DROP SINK statement) in one
// catalog change ([drop-atomic]): their jobs stop and go, and each table
// a sink wrote gets its DML job back, over a fresh log. With ifExists a
// missing sink is skipped; otherwise it is an error and nothing goes.
func (e *Engine) DropSinks(ctx context.Context, names []catalog.ObjectName, ifExists bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	p, err := planDropSinks(cat, names, ifExists)
	if err != nil || p.empty() {
		return err
	}
	return e.applyDrop(ctx, p)
}

// Steps of a DROP at which tests make the process die (Engine.crashAt):
// after the intent is durable, after the jobs stopped, after the commit,
// after the first table's files went, after all files went, after the
// registered jobs started.
const (
	dropStepIntent    = "drop: intent written"
	dropStepStopped   = "drop: jobs stopped"
	dropStepCommitted = "drop: committed"
	dropStepCleaning  = "drop: first table removed"
	dropStepCleaned   = "drop: files removed"
	dropStepStarted   = "drop: jobs started"
)

// step returns the error of a death a test injects at step (nil in
// production, where crashAt is nil). The caller returns it as it is,
// doing nothing more, as a killed process does nothing more.
func (e *Engine) step(step string) error {
	if e.crashAt == nil {
		return nil
	}
	return e.crashAt(step)
}

// applyDrop carries out plan p (the steps above). The caller holds
// e.ddl.
func (e *Engine) applyDrop(ctx context.Context, p dropPlan) error {
	intent, err := e.writeDropIntent(p.tables, p.jobs)
	if err != nil {
		return err
	}
	if err := e.step(dropStepIntent); err != nil {
		return err
	}
	// The order does not matter: none of the jobs commits again, and
	// until the change the catalog holds them all, so a crash resumes
	// each from its checkpoint.
	for _, j := range p.jobs {
		e.stopJob(j)
	}
	var errs []error
	for _, src := range p.sources {
		errs = append(errs, e.resetCDCJob(src))
	}
	for _, t := range p.dmlBack {
		_, err := e.freshDMLJob(t)
		errs = append(errs, err)
	}
	err = errors.Join(errs...)
	if err == nil {
		if err = e.step(dropStepStopped); err != nil {
			return err
		}
		err = e.meta.ApplyChange(ctx, p.change)
	}
	if err != nil {
		// Nothing changed in the catalog: what stopped runs again. The
		// intent stays; it names objects the catalog holds, which its
		// replay leaves alone.
		return errors.Join(err, e.restartDropped(context.WithoutCancel(ctx), p))
	}
	if err := e.step(dropStepCommitted); err != nil {
		return err
	}
	errs = errs[:0]
	for i, n := range p.tables {
		errs = append(errs, e.dropStorage(n))
		if i == 0 {
			if err := e.step(dropStepCleaning); err != nil {
				return err
			}
		}
	}
	for _, j := range p.jobs {
		errs = append(errs, e.forgetJob(j))
	}
	if err := e.step(dropStepCleaned); err != nil {
		return err
	}
	if len(p.change.RegisterJobs) > 0 {
		cat, err := e.meta.Catalog(ctx)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, def := range p.change.RegisterJobs {
			errs = append(errs, e.startJob(ctx, cat, def))
		}
	}
	if err := e.step(dropStepStarted); err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err // the intent stays, for the next start to finish
	}
	return e.finishDropIntent(intent, p.tables)
}

// restartDropped starts again the jobs that plan p stopped, after its
// change failed: those the catalog still holds, as it holds them.
func (e *Engine) restartDropped(ctx context.Context, p dropPlan) error {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	names := slices.Clone(p.jobs)
	for _, src := range p.sources {
		names = append(names, cdcJobName(src))
	}
	var errs []error
	for _, name := range names {
		def, err := cat.Job(name)
		if err != nil {
			continue
		}
		errs = append(errs, e.startJob(ctx, cat, def))
	}
	return errors.Join(errs...)
}
