package parquet

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratadb/strata/table/record"
)

// TestBufferPoolBounds: the pool keeps buffers up to its per-buffer and
// total bounds, drops the rest, and hands kept buffers back empty.
func TestBufferPoolBounds(t *testing.T) {
	p := bufferPool{maxBuffer: 100, maxBytes: 250}
	mk := func(c int) *bytes.Buffer {
		b := bytes.NewBuffer(make([]byte, 0, c))
		b.WriteString("x")
		return b
	}
	p.put(mk(101)) // above maxBuffer: dropped
	if n, b := p.pooled(); n != 0 || b != 0 {
		t.Fatalf("kept %d buffers of %d bytes after an oversized put", n, b)
	}
	p.put(mk(100))
	p.put(mk(100))
	p.put(mk(100)) // 300 > maxBytes: dropped
	p.put(mk(50))
	if n, b := p.pooled(); n != 3 || b != 250 {
		t.Fatalf("kept %d buffers of %d bytes, want 3 of 250", n, b)
	}
	got := p.get()
	if got.Len() != 0 || got.Cap() != 50 {
		t.Fatalf("get returned len %d cap %d, want the last kept buffer, empty", got.Len(), got.Cap())
	}
	if n, b := p.pooled(); n != 2 || b != 200 {
		t.Fatalf("after get: %d buffers of %d bytes, want 2 of 200", n, b)
	}
	p.get()
	p.get()
	if fresh := p.get(); fresh.Cap() != 0 {
		t.Fatalf("empty pool gave a buffer of cap %d", fresh.Cap())
	}
}

// TestEncodeReusesBoundedBuffers: encoding many files leaves the shared
// pool within its bounds.
func TestEncodeReusesBoundedBuffers(t *testing.T) {
	// directFile encodes its file through EncodeBlock.
	for i := 0; i < 20; i++ {
		directFile(t, 200)
	}
	n, b := encodeBuffers.pooled()
	if n == 0 || b > maxPoolBytes {
		t.Fatalf("pool keeps %d buffers of %d bytes (bound %d)", n, b, maxPoolBytes)
	}
}

// TestEncodeInUnpooledBuffer: EncodeBlockTo lends a file whose buffer the
// pool will not keep, and it reads back the same as a copied one;
// EncodeBlock's copy is of the file's exact size.
func TestEncodeInUnpooledBuffer(t *testing.T) {
	s, copied, kvs := directFile(t, 300)
	saved := encodeBuffers.maxBuffer
	encodeBuffers.maxBuffer = 1
	defer func() { encodeBuffers.maxBuffer = saved }()
	blk := record.BlockOf(s.Types(), s.HasPrimaryKey(), kvs)
	var decoded int
	err := EncodeBlockTo(s, blk, func(data []byte) error {
		if !bytes.Equal(data, copied) {
			t.Fatalf("lent file: %d bytes, copied %d bytes, different", len(data), len(copied))
		}
		b, err := DecodeBlock("f", data, s, s)
		if err != nil {
			return err
		}
		decoded = b.Len()
		return nil
	})
	if err != nil || decoded != len(kvs) {
		t.Fatalf("decoded %d records, want %d: %v", decoded, len(kvs), err)
	}
	data, err := EncodeBlock(s, blk)
	if err != nil || !bytes.Equal(data, copied) || cap(data) != len(data) {
		t.Fatalf("EncodeBlock: %d bytes (cap %d), want %d: %v", len(data), cap(data), len(copied), err)
	}
	// use's error comes back as it is.
	stop := errors.New("stop")
	if err := EncodeBlockTo(s, blk, func([]byte) error { return stop }); err != stop {
		t.Fatalf("EncodeBlockTo returned %v, want use's error", err)
	}
}
