package statetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// Factory opens backends for the suite: New returns an empty one, Restore
// one rebuilt from a handle Snapshot returned with the same files.
type Factory struct {
	New     func(t *testing.T) state.Backend
	Restore func(t *testing.T, handle []byte, files state.SnapshotFiles) state.Backend
	// Files is where snapshots put their files (nil when the backend
	// writes none).
	Files state.SnapshotFiles
}

type model struct {
	values map[string]string
	maps   map[string]map[string]string
	lists  map[string][]string
	op     map[string]string
}

func newModel() *model {
	return &model{values: map[string]string{}, maps: map[string]map[string]string{}, lists: map[string][]string{}, op: map[string]string{}}
}

func (m *model) clone() *model {
	c := newModel()
	for k, v := range m.values {
		c.values[k] = v
	}
	for k, mm := range m.maps {
		c.maps[k] = map[string]string{}
		for a, b := range mm {
			c.maps[k][a] = b
		}
	}
	for k, l := range m.lists {
		c.lists[k] = slices.Clone(l)
	}
	for k, v := range m.op {
		c.op[k] = v
	}
	return c
}

const maxPar = 16

func key(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }

// snapshot takes a snapshot and runs its upload.
func snapshot(b state.Backend, id base.CheckpointID, files state.SnapshotFiles) ([]byte, error) {
	sn, err := b.Snapshot(id, files)
	if err != nil {
		return nil, err
	}
	if sn.Upload != nil {
		if err := sn.Upload(); err != nil {
			return nil, err
		}
	}
	return sn.Handle, nil
}

// snapshotLater takes a snapshot and returns a function that finishes it
// (Upload, then Encode for an AsyncSnapshotter) and returns the handle,
// so that the history can go on changing the backend in between, as the
// runtime does.
func snapshotLater(b state.Backend, id base.CheckpointID, files state.SnapshotFiles) (func() ([]byte, error), error) {
	var sn state.Snapshot
	var err error
	if a, ok := b.(state.AsyncSnapshotter); ok {
		sn, err = a.SnapshotAsync(id, files)
	} else {
		sn, err = b.Snapshot(id, files)
	}
	if err != nil {
		return nil, err
	}
	return func() ([]byte, error) {
		if sn.Upload != nil {
			if err := sn.Upload(); err != nil {
				return nil, err
			}
		}
		if sn.Encode != nil {
			return sn.Encode()
		}
		return sn.Handle, nil
	}, nil
}

// Run runs the suite against f.
func Run(t *testing.T, f Factory) {
	t.Run("random-history", func(t *testing.T) {
		for seed := range uint64(5) {
			randomHistory(t, f, seed)
		}
	})
	t.Run("empty-snapshot", func(t *testing.T) {
		b := f.New(t)
		h, err := snapshot(b, 1, f.Files)
		if err != nil {
			t.Fatal(err)
		}
		r := f.Restore(t, h, f.Files)
		s := state.NewStore(r, state.RangeOf(0, 1, maxPar), maxPar)
		s.SetCurrentKey(key(1))
		if _, ok, _ := s.Value("v").Get(); ok {
			t.Fatal("restored empty state has a value")
		}
		_ = r.Close()
		_ = b.Close()
	})
}

// randomHistory applies random operations to a store over the backend and
// to a model, compares every read, snapshots now and then and finally
// restores each snapshot and compares it with the model as it was.
func randomHistory(t *testing.T, f Factory, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := f.New(t)
	defer b.Close()
	s := state.NewStore(b, state.RangeOf(0, 1, maxPar), maxPar)
	m := newModel()
	type snap struct {
		handle []byte
		m      *model
		// finish, until called, completes the snapshot; it is called a
		// few steps after the snapshot, as the runtime's writer does.
		finish   func() ([]byte, error)
		finishAt int
	}
	var snaps []snap
	finish := func(sn *snap) {
		t.Helper()
		h, err := sn.finish()
		if err != nil {
			t.Fatal(err)
		}
		sn.handle, sn.finish = bytes.Clone(h), nil
	}
	check := func(s *state.Store, m *model, k int) {
		t.Helper()
		s.SetCurrentKey(key(k))
		kk := string(key(k))
		v, ok, err := s.Value("v").Get()
		if err != nil {
			t.Fatal(err)
		}
		want, wok := m.values[kk]
		if ok != wok || string(v) != want {
			t.Fatalf("seed %d key %s value = %q,%v want %q,%v", seed, kk, v, ok, want, wok)
		}
		var got []string
		if err := s.Map("m").Iterate(func(a, b []byte) error {
			got = append(got, string(a)+"="+string(b))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var wantMap []string
		for a, b := range m.maps[kk] {
			wantMap = append(wantMap, a+"="+b)
		}
		slices.Sort(wantMap)
		if !slices.Equal(got, wantMap) {
			t.Fatalf("seed %d key %s map = %v want %v", seed, kk, got, wantMap)
		}
		l, err := s.List("l").Get()
		if err != nil {
			t.Fatal(err)
		}
		var gotList []string
		for _, e := range l {
			gotList = append(gotList, string(e))
		}
		if !slices.Equal(gotList, m.lists[kk]) {
			t.Fatalf("seed %d key %s list = %v want %v", seed, kk, gotList, m.lists[kk])
		}
		ov, ok, err := s.OperatorValue("pos").Get()
		if err != nil {
			t.Fatal(err)
		}
		if want, wok := m.op["pos"]; ok != wok || string(ov) != want {
			t.Fatalf("seed %d operator value = %q want %q", seed, ov, want)
		}
	}
	for step := range 3000 {
		k := rng.IntN(40)
		s.SetCurrentKey(key(k))
		kk := string(key(k))
		val := fmt.Sprintf("v%d", step)
		var err error
		switch rng.IntN(12) {
		case 0, 1:
			err = s.Value("v").Set([]byte(val))
			m.values[kk] = val
		case 2:
			err = s.Value("v").Clear()
			delete(m.values, kk)
		case 3, 4:
			mk := fmt.Sprintf("mk%d", rng.IntN(5))
			err = s.Map("m").Put([]byte(mk), []byte(val))
			if m.maps[kk] == nil {
				m.maps[kk] = map[string]string{}
			}
			m.maps[kk][mk] = val
		case 5:
			mk := fmt.Sprintf("mk%d", rng.IntN(5))
			err = s.Map("m").Delete([]byte(mk))
			delete(m.maps[kk], mk)
			if len(m.maps[kk]) == 0 {
				delete(m.maps, kk)
			}
		case 6:
			err = s.Map("m").Clear()
			delete(m.maps, kk)
		case 7, 8:
			err = s.List("l").Add([]byte(val))
			m.lists[kk] = append(m.lists[kk], val)
		case 9:
			err = s.List("l").Clear()
			delete(m.lists, kk)
		case 10:
			err = s.OperatorValue("pos").Set([]byte(val))
			m.op["pos"] = val
		case 11:
			if rng.IntN(20) == 0 {
				fin, err := snapshotLater(b, base.CheckpointID(len(snaps)+1), f.Files)
				if err != nil {
					t.Fatal(err)
				}
				snaps = append(snaps, snap{finish: fin, finishAt: step + rng.IntN(50), m: m.clone()})
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range snaps {
			if snaps[i].finish != nil && snaps[i].finishAt <= step {
				finish(&snaps[i])
			}
		}
		check(s, m, rng.IntN(40))
	}
	if len(snaps) == 0 {
		t.Fatalf("seed %d took no snapshot", seed)
	}
	for i := range snaps {
		if snaps[i].finish != nil {
			finish(&snaps[i])
		}
	}
	for _, sn := range snaps {
		r := f.Restore(t, sn.handle, f.Files)
		rs := state.NewStore(r, state.RangeOf(0, 1, maxPar), maxPar)
		for k := range 40 {
			check(rs, sn.m, k)
		}
		_ = r.Close()
	}
}
