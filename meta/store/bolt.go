package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/stratadb/strata/internal/base"
)

// bucketName is the one bucket the meta store uses (FORMAT.md).
var bucketName = []byte("strata-meta")

// formatKey holds the store's format version in the bucket, unsealed.
const formatKey = "\x00format"

// digestKey holds the content digest (see digest) in the bucket, unsealed.
const digestKey = "\x00digest"

// digest is an order-independent digest of a set of key-value pairs: the
// XOR of the first 16 bytes of SHA-256(len(key), key, sealed value) over
// every pair. Apply updates it in the same transaction as the pairs it
// changes (XOR out the old pair, XOR in the new); Load recomputes it. The
// per-value envelope catches a damaged value; the digest catches what
// envelopes cannot: a damaged page header that hides keys, or a damaged
// branch pointer that leads to an older copy-on-write page whose values
// are intact but stale.
type digest [16]byte

func (d *digest) toggle(key string, sealed []byte) {
	h := sha256.New()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(key)))
	h.Write(n[:])
	h.Write([]byte(key))
	h.Write(sealed)
	sum := h.Sum(nil)
	for i := range d {
		d[i] ^= sum[i]
	}
}

func reserved(key string) bool { return key == formatKey || key == digestKey }

// FormatVersion is the version of the bbolt layout (FORMAT.md).
const FormatVersion = "1"

// Bolt is the embedded Store: one bbolt file.
type Bolt struct {
	path string
	db   *bolt.DB
}

// OpenBolt opens the meta store file at path, creating it when it does
// not exist. A new file is built under a temporary name and renamed into
// place, so a crash during creation never leaves a half-made store at
// path. An existing file is checked whole before OpenBolt returns
// (invariant store-no-panic-on-corruption); damage gives an error wrapping
// base.ErrCorruption that names the file. A file held by another process
// gives an error after one second.
func OpenBolt(path string) (*Bolt, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := createBolt(path); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("meta store %s: %w", path, err)
	case info.Size() == 0:
		return nil, fmt.Errorf("meta store %s is empty (truncated?): %w", path, base.ErrCorruption)
	}
	b := &Bolt{path: path}
	if err := b.openChecked(); err != nil {
		if b.db != nil {
			_ = b.db.Close()
		}
		return nil, err
	}
	return b, nil
}

func createBolt(path string) error {
	tmp := path + ".creating"
	_ = os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("meta store %s: creating: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket(bucketName)
		if err != nil {
			return err
		}
		if err := bk.Put([]byte(digestKey), make([]byte, len(digest{}))); err != nil {
			return err
		}
		return bk.Put([]byte(formatKey), []byte(FormatVersion))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("meta store %s: creating: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("meta store %s: creating: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("meta store directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("meta store directory %s: fsync: %w", dir, err)
	}
	return nil
}

// bbolt's meta page layout (go.etcd.io/bbolt internal/common/meta.go,
// stable since file format version 2): a 16-byte page header, then magic,
// version, page size, flags (4 bytes each), root bucket (16), freelist,
// high-water page id and transaction id (8 each), then an FNV-64a checksum
// of the 56 bytes before it, all in the machine's byte order.
const (
	boltPageHeader = 16
	boltMetaSum    = 56
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
)

// checkMetaPages refuses a file whose two meta pages are not both valid.
//
// bbolt writes a transaction's meta page last, alternating between two,
// and on open falls back to the older one when the newer does not check:
// that undoes a torn last write after a crash, but it equally undoes an
// acknowledged transaction whose meta page was damaged later. For the meta
// service that would be silent loss (a clock reservation or a strong-read
// floor going back, breaking invariant epoch-monotonic), so both pages
// must check. A torn meta page needs a crash inside the write of its first
// 72 bytes, within one disk sector, which sector-atomic disks do not
// produce.
func checkMetaPages(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("meta store %s: %w", path, err)
	}
	defer f.Close()
	meta := make([]byte, boltPageHeader+boltMetaSum+8)
	var pageSize int64
	for i := range 2 {
		off := int64(i) * pageSize
		if _, err := f.ReadAt(meta, off); err != nil {
			return fmt.Errorf("meta store %s is damaged: reading meta page %d at offset %d: %v: %w", path, i, off, err, base.ErrCorruption)
		}
		m := meta[boltPageHeader:]
		h := fnv.New64a()
		h.Write(m[:boltMetaSum])
		switch {
		case binary.NativeEndian.Uint32(m[0:]) != boltMagic:
			return fmt.Errorf("meta store %s is damaged: meta page %d is not a bbolt meta page: %w", path, i, base.ErrCorruption)
		case binary.NativeEndian.Uint32(m[4:]) != boltVersion:
			return fmt.Errorf("meta store %s is damaged: meta page %d has bbolt format %d: %w", path, i, binary.NativeEndian.Uint32(m[4:]), base.ErrCorruption)
		case binary.NativeEndian.Uint64(m[boltMetaSum:]) != h.Sum64():
			return fmt.Errorf("meta store %s is damaged: meta page %d fails its checksum; bbolt would silently fall back to the previous transaction: %w", path, i, base.ErrChecksum)
		}
		if i == 0 {
			pageSize = int64(binary.NativeEndian.Uint32(m[8:]))
			if pageSize < 512 || pageSize > 1<<16 {
				return fmt.Errorf("meta store %s is damaged: page size %d: %w", path, pageSize, base.ErrCorruption)
			}
		}
	}
	return nil
}

// openChecked opens the file and reads every key in this goroutine with
// faults turned into panics, recovering either as corruption.
func (b *Bolt) openChecked() (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("meta store %s is damaged: reading it failed with %v: %w", b.path, p, base.ErrCorruption)
		}
	}()
	if err := checkMetaPages(b.path); err != nil {
		return err
	}
	db, err := bolt.Open(b.path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) ||
			errors.Is(err, berrors.ErrChecksum) || strings.Contains(err.Error(), "file size too small") {
			return fmt.Errorf("meta store %s is damaged: %v: %w", b.path, err, base.ErrCorruption)
		}
		if errors.Is(err, berrors.ErrTimeout) {
			return fmt.Errorf("meta store %s is locked: another strata process is using this data directory: %w", b.path, base.ErrConflict)
		}
		return fmt.Errorf("meta store %s: %w", b.path, err)
	}
	b.db = db
	info, err := os.Stat(b.path)
	if err != nil {
		return fmt.Errorf("meta store %s: %w", b.path, err)
	}
	return db.View(func(tx *bolt.Tx) error {
		if size := tx.Size(); size > info.Size() {
			return fmt.Errorf("meta store %s is truncated: %d bytes, its last transaction needs %d: %w", b.path, info.Size(), size, base.ErrCorruption)
		}
		_, err := b.readAll(tx)
		return err
	})
}

// readAll returns every key and checked payload of the bucket.
func (b *Bolt) readAll(tx *bolt.Tx) (map[string][]byte, error) {
	bk := tx.Bucket(bucketName)
	if bk == nil {
		return nil, fmt.Errorf("meta store %s has no %q bucket: %w", b.path, bucketName, base.ErrCorruption)
	}
	if f := bk.Get([]byte(formatKey)); string(f) != FormatVersion {
		return nil, fmt.Errorf("meta store %s has format %q, this build reads %q: %w", b.path, f, FormatVersion, base.ErrCorruption)
	}
	var stored digest
	if d := bk.Get([]byte(digestKey)); len(d) == len(stored) {
		copy(stored[:], d)
	} else {
		return nil, fmt.Errorf("meta store %s: content digest of %d bytes, want %d: %w", b.path, len(d), len(stored), base.ErrCorruption)
	}
	var sum digest
	out := map[string][]byte{}
	err := bk.ForEach(func(k, v []byte) error {
		key := string(k)
		if reserved(key) {
			return nil
		}
		sum.toggle(key, v)
		if v == nil {
			return fmt.Errorf("meta store %s: key %q is a bucket: %w", b.path, key, base.ErrCorruption)
		}
		p, err := Open(key, v)
		if err != nil {
			return fmt.Errorf("meta store %s: %w", b.path, err)
		}
		out[key] = append([]byte(nil), p...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if sum != stored {
		return nil, fmt.Errorf("meta store %s: content digest does not match (keys lost, added, renamed or stale): %w", b.path, base.ErrChecksum)
	}
	return out, nil
}

// Load reads and checks every key.
func (b *Bolt) Load(context.Context) (out map[string][]byte, err error) {
	err = b.db.View(func(tx *bolt.Tx) error {
		out, err = b.readAll(tx)
		return err
	})
	return out, err
}

// Apply writes b in one bbolt transaction, fsynced on commit.
func (b *Bolt) Apply(_ context.Context, batch Batch) error {
	err := b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketName)
		var d digest
		if cur := bk.Get([]byte(digestKey)); len(cur) == len(d) {
			copy(d[:], cur)
		} else {
			return fmt.Errorf("content digest of %d bytes: %w", len(cur), base.ErrCorruption)
		}
		for _, k := range batch.Deletes {
			if reserved(k) {
				return fmt.Errorf("key %q is reserved: %w", k, base.ErrInvalidArgument)
			}
			if old := bk.Get([]byte(k)); old != nil {
				d.toggle(k, old)
			}
			if err := bk.Delete([]byte(k)); err != nil {
				return fmt.Errorf("deleting %q: %w", k, err)
			}
		}
		for k, v := range batch.Puts {
			if reserved(k) {
				return fmt.Errorf("key %q is reserved: %w", k, base.ErrInvalidArgument)
			}
			if old := bk.Get([]byte(k)); old != nil {
				d.toggle(k, old)
			}
			sealed := Seal(v)
			d.toggle(k, sealed)
			if err := bk.Put([]byte(k), sealed); err != nil {
				return fmt.Errorf("putting %q: %w", k, err)
			}
		}
		return bk.Put([]byte(digestKey), d[:])
	})
	if err != nil {
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return fmt.Errorf("meta store %s: %w", b.path, base.ErrClosed)
		}
		return fmt.Errorf("meta store %s: %w", b.path, err)
	}
	return nil
}

// Close closes the file.
func (b *Bolt) Close() error {
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("meta store %s: closing: %w", b.path, err)
	}
	return nil
}
