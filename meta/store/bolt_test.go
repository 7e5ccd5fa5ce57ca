package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

var ctx = context.Background()

func fill(t *testing.T, s Store) map[string][]byte {
	t.Helper()
	want := map[string][]byte{}
	// 30 transactions of 10 keys each, some deleting what an earlier one
	// wrote: enough pages for damage to land on data, few fsyncs.
	for txn := range 30 {
		var b Batch
		for j := range 10 {
			i := txn*10 + j
			k := fmt.Sprintf("committed/db.t%03d", i)
			v := []byte(fmt.Sprintf(`{"epoch":%d,"pad":%q}`, i, strings.Repeat("x", i%50)))
			b.Put(k, v)
			want[k] = v
		}
		if txn > 0 && txn%3 == 0 {
			dk := fmt.Sprintf("committed/db.t%03d", txn*10-1)
			b.Delete(dk)
			delete(want, dk)
		}
		if err := s.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

func TestBoltRoundTripAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx); err != nil || len(got) != 0 {
		t.Fatalf("new store Load = %v, %v", got, err)
	}
	want := fill(t, s)
	if got, err := s.Load(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Load differs (%v)", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, Batch{Puts: map[string][]byte{"a": nil}}); !errors.Is(err, base.ErrClosed) {
		t.Fatalf("Apply after Close = %v", err)
	}
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Load(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Load after reopen differs (%v)", err)
	}
	if _, err := os.Stat(path + ".creating"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}

func TestMemoryStore(t *testing.T) {
	m := NewMemory()
	want := fill(t, m)
	if got, err := m.Load(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Load differs (%v)", err)
	}
	m.FailApply(errors.New("injected"))
	if err := m.Apply(ctx, Batch{Puts: map[string][]byte{"x": []byte("1")}}); err == nil {
		t.Fatal("injected failure ignored")
	}
	m.FailApply(nil)
	_ = m.Close()
	if _, err := m.Load(ctx); !errors.Is(err, base.ErrClosed) {
		t.Fatalf("Load after Close = %v", err)
	}
	if got, err := m.Reopen().Load(ctx); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Load after Reopen differs (%v)", err)
	}
}

func TestEnvelope(t *testing.T) {
	sealed := Seal([]byte("hello"))
	if p, err := Open("k", sealed); err != nil || string(p) != "hello" {
		t.Fatalf("Open = %q, %v", p, err)
	}
	flipped := append([]byte(nil), sealed...)
	flipped[7] ^= 1
	if _, err := Open("k", flipped); !errors.Is(err, base.ErrChecksum) || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("flipped payload: %v", err)
	}
	if _, err := Open("k", sealed[:3]); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("short: %v", err)
	}
	other := append([]byte(nil), sealed...)
	other[0] = 9
	if _, err := Open("k", other); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "format 9") {
		t.Fatalf("other format: %v", err)
	}
}

// damaged writes a real store, closes it, damages the file with f, and
// returns what OpenBolt then says, along with the original content.
func damaged(t *testing.T, f func(t *testing.T, path string, data []byte)) (map[string][]byte, map[string][]byte, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "meta.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	want := fill(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f(t, path, data)
	s, err = OpenBolt(path)
	if err != nil {
		return want, nil, err
	}
	defer s.Close()
	got, err := s.Load(ctx)
	return want, got, err
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDamagedBoltFileGivesCorruptionError(t *testing.T) {
	const page = 4096
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string, data []byte)
	}{
		{"truncated to zero", func(t *testing.T, path string, data []byte) { writeFile(t, path, nil) }},
		{"truncated to 100 bytes", func(t *testing.T, path string, data []byte) { writeFile(t, path, data[:100]) }},
		{"truncated to two pages", func(t *testing.T, path string, data []byte) { writeFile(t, path, data[:2*page]) }},
		{"truncated to half", func(t *testing.T, path string, data []byte) { writeFile(t, path, data[:len(data)/2]) }},
		{"both meta pages scribbled", func(t *testing.T, path string, data []byte) {
			d := append([]byte(nil), data...)
			for i := 16; i < 2*page; i += page {
				copy(d[i:i+64], strings.Repeat("\xa5", 64))
			}
			writeFile(t, path, d)
		}},
		{"a key renamed in place", func(t *testing.T, path string, data []byte) {
			d := append([]byte(nil), data...)
			i := bytes.LastIndex(d, []byte("committed/db.t221"))
			if i < 0 {
				t.Fatal("key not found in the file")
			}
			d[i] = 'C' // the value and its envelope stay intact
			writeFile(t, path, d)
		}},
		{"a value replaced by another valid envelope", func(t *testing.T, path string, data []byte) {
			d := append([]byte(nil), data...)
			old := Seal([]byte(`{"epoch":221,"pad":"xxxxxxxxxxxxxxxxxxxxx"}`))
			i := bytes.LastIndex(d, old)
			if i < 0 {
				t.Fatal("value not found in the file")
			}
			copy(d[i:], Seal([]byte(`{"epoch":999,"pad":"xxxxxxxxxxxxxxxxxxxxx"}`)))
			writeFile(t, path, d)
		}},
		{"one meta page scribbled (bbolt alone would fall back to the other)", func(t *testing.T, path string, data []byte) {
			d := append([]byte(nil), data...)
			// Bytes of meta page 1's root bucket record: whether page 1 holds the
			// newest or the previous transaction, the file is refused.
			copy(d[page+40:page+48], "\xde\xad\xbe\xef\xde\xad\xbe\xef")
			writeFile(t, path, d)
		}},
		{"every data page scribbled", func(t *testing.T, path string, data []byte) {
			d := append([]byte(nil), data...)
			r := rand.New(rand.NewPCG(1, 2))
			for off := 2 * page; off < len(d); off++ {
				d[off] = byte(r.Uint32())
			}
			writeFile(t, path, d)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := damaged(t, tc.damage)
			if !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "meta.db") {
				t.Fatalf("OpenBolt on a damaged file = %v, want a corruption error naming the file", err)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
}

// scribble writes data to path with random bytes over up to four random
// stretches of up to 64 bytes, and one time in three cut at a random length.
func scribble(t *testing.T, seed uint64, path string, data []byte) {
	r := rand.New(rand.NewPCG(seed, 7))
	d := append([]byte(nil), data...)
	for range 1 + r.IntN(4) {
		off := r.IntN(len(d) - 64)
		for i := range 1 + r.IntN(64) {
			d[off+i] = byte(r.Uint32())
		}
	}
	if r.IntN(3) == 0 {
		d = d[:r.IntN(len(d))]
	}
	writeFile(t, path, d)
}

// TestRandomScribblesNeverPanic scribbles random bytes at random places:
// the store must either refuse to open with a corruption error, or load
// exactly what was written (the scribble hit free space). It must never
// panic, crash, or load something else.
func TestRandomScribblesNeverPanic(t *testing.T) {
	var refused, intact int
	for seed := range uint64(60) {
		want, got, err := damaged(t, func(t *testing.T, path string, data []byte) {
			scribble(t, seed, path, data)
		})
		switch {
		case err != nil && errors.Is(err, base.ErrCorruption):
			refused++
		case err != nil:
			t.Fatalf("seed %d: error without the corruption marker: %v", seed, err)
		case !reflect.DeepEqual(got, want):
			t.Fatalf("seed %d: damaged file loaded different content without an error", seed)
		default:
			intact++
		}
	}
	t.Logf("refused %d, intact %d", refused, intact)
	if refused == 0 {
		t.Fatal("no scribble was detected; the test is not exercising corruption")
	}
}
