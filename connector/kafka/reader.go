package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// fetchBuffer is how many polled batches a Reader holds ahead of Next
// (bounded: the poller waits when it is full).
const fetchBuffer = 4

// pollRecords is the most records one poll takes.
const pollRecords = 1024

// Reader reads one partition of a topic for an ingest source (it
// implements connector/ingest.Reader; see doc.go, Positions). Next(pos)
// returns the record at the first offset >= pos as one transaction, and
// the offset after it. A Reader is safe for concurrent use, and survives
// rewinds: a Next at another position than the one the last call
// returned restarts the fetching there.
type Reader struct {
	brokers   []string
	topic     string
	partition int32
	startup   StartupMode
	committed bool
	dec       format.Decoder
	types     []types.Type
	errs      *format.Errors
	source    string

	mu struct {
		sync.Mutex
		// cursor is the position the buffered records continue from;
		// meaningful while cl is not nil.
		cursor  uint64
		cl      *kgo.Client
		cancel  context.CancelFunc
		done    chan struct{}
		ch      chan fetched
		pending []*kgo.Record
		changes []format.Change
	}
	// latest is the end offset the Latest startup mode resolved (once
	// per Reader), or -1. Atomic, not under mu: the poller sets it while
	// Next may hold mu waiting for the poller to stop.
	latest atomic.Int64
}

type fetched struct {
	recs []*kgo.Record
	err  error
}

// ReaderConfig configures a Reader (OpenReaders fills it from options).
type ReaderConfig struct {
	Brokers       []string
	Topic         string
	Partition     int32
	Startup       StartupMode
	ReadCommitted bool
	Columns       []catalog.Column
	Format        format.Options
	// Errors applies the error mode; nil fails on the first bad record.
	Errors *format.Errors
}

// NewReader returns a Reader of one partition. It connects lazily, on the
// first Next.
func NewReader(cfg ReaderConfig) (*Reader, error) {
	dec, err := format.New(cfg.Format, cfg.Columns)
	if err != nil {
		return nil, fmt.Errorf("kafka topic %s: %w", cfg.Topic, err)
	}
	if cfg.Errors == nil {
		cfg.Errors, _ = format.NewErrors(format.Fail, nil)
	}
	if cfg.Startup == "" {
		cfg.Startup = Earliest
	}
	r := &Reader{brokers: cfg.Brokers, topic: cfg.Topic, partition: cfg.Partition, startup: cfg.Startup, committed: cfg.ReadCommitted,
		dec: dec, types: format.Types(cfg.Columns), errs: cfg.Errors, source: "kafka topic " + cfg.Topic}
	r.latest.Store(-1)
	return r, nil
}

// Partition returns the partition the Reader reads.
func (r *Reader) Partition() int32 { return r.partition }

// Errors returns the error mode in force, with its count of dropped
// records.
func (r *Reader) Errors() *format.Errors { return r.errs }

// Next implements connector/ingest.Reader. It never blocks on the broker:
// records are fetched in the background into a bounded buffer, and Next
// returns a nil chunk when that buffer is empty. A record that decodes to
// no change (a tombstone, or a bad record the error mode drops) gives an
// empty chunk and still advances the position. A fetch error (an offset
// no longer in the log, an unknown topic) or a bad record in fail mode is
// returned, naming topic, partition and offset.
func (r *Reader) Next(pos uint64) (*types.Chunk, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.cl == nil || pos != r.mu.cursor {
		if err := r.startLocked(pos); err != nil {
			return nil, pos, err
		}
	}
	for {
		if len(r.mu.pending) == 0 {
			select {
			case f := <-r.mu.ch:
				if f.err != nil {
					r.stopLocked()
					return nil, pos, fmt.Errorf("%s partition %d at offset %d: %w", r.source, r.partition, pos, f.err)
				}
				r.mu.pending = f.recs
				continue
			default:
				return nil, pos, nil
			}
		}
		rec := r.mu.pending[0]
		r.mu.pending[0] = nil
		r.mu.pending = r.mu.pending[1:]
		if rec.Offset < 0 || uint64(rec.Offset) < pos {
			continue // below the position asked for
		}
		next := uint64(rec.Offset) + 1
		changes, err := r.dec.Decode(r.mu.changes[:0], rec.Value)
		if err != nil {
			herr := r.errs.Handle(format.BadRecord{Source: r.source, Where: fmt.Sprintf("partition %d offset %d", r.partition, rec.Offset),
				Position: uint64(rec.Offset), Key: rec.Key, Raw: rec.Value, Err: err})
			if herr != nil {
				r.stopLocked() // the next call re-reads the record
				return nil, pos, herr
			}
		}
		r.mu.cursor = next
		c := types.NewChunk(r.types, max(len(changes), 1))
		for _, ch := range changes {
			c.Append(ch.Kind, ch.Row)
		}
		clear(changes)
		r.mu.changes = changes[:0]
		return c, next, nil
	}
}

// startLocked (re)starts fetching at pos: a new client, so that nothing
// fetched for an older position can be returned for this one.
func (r *Reader) startLocked(pos uint64) error {
	r.stopLocked()
	opts := []kgo.Opt{
		kgo.SeedBrokers(r.brokers...),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxWait(200 * time.Millisecond),
	}
	if r.committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("%s partition %d: client: %v: %w", r.source, r.partition, err, base.ErrInvalidArgument)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.cl, r.mu.cancel, r.mu.cursor = cl, cancel, pos
	r.mu.ch = make(chan fetched, fetchBuffer)
	r.mu.done = make(chan struct{})
	r.mu.pending = nil
	go r.poll(ctx, cl, pos, r.mu.ch, r.mu.done)
	return nil
}

// stopLocked stops the fetching and waits for its goroutine.
func (r *Reader) stopLocked() {
	if r.mu.cl == nil {
		return
	}
	r.mu.cancel()
	<-r.mu.done
	r.mu.cl.Close()
	r.mu.cl, r.mu.pending, r.mu.ch = nil, nil, nil
}

// Close stops fetching. A later Next starts again.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopLocked()
	return nil
}

// poll fetches from pos into ch until ctx ends.
func (r *Reader) poll(ctx context.Context, cl *kgo.Client, pos uint64, ch chan<- fetched, done chan<- struct{}) {
	defer close(done)
	send := func(f fetched) bool {
		select {
		case ch <- f:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var off kgo.Offset
	switch {
	case pos > 0:
		off = kgo.NewOffset().At(int64(pos))
	case r.startup == Earliest:
		off = kgo.NewOffset().AtStart()
	default:
		end, err := r.resolveLatest(ctx, cl)
		if err != nil {
			if ctx.Err() == nil {
				send(fetched{err: err})
			}
			return
		}
		off = kgo.NewOffset().At(end)
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{r.topic: {r.partition: off}})
	for {
		fs := cl.PollRecords(ctx, pollRecords)
		if ctx.Err() != nil {
			return
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, kgo.ErrClientClosed) && ferr == nil {
				ferr = err
			}
		})
		if recs := fs.Records(); len(recs) > 0 && !send(fetched{recs: recs}) {
			return
		}
		if ferr != nil {
			send(fetched{err: ferr})
			return
		}
	}
}

// resolveLatest returns the partition's end offset (the last stable offset when
// reading committed records), resolved once per Reader, so that a
// rewind to position 0 in the same process starts where the first start
// did.
func (r *Reader) resolveLatest(ctx context.Context, cl *kgo.Client) (int64, error) {
	if end := r.latest.Load(); end >= 0 {
		return end, nil
	}
	for {
		end, err := listEnd(ctx, cl, r.topic, r.partition, r.committed)
		if err == nil {
			r.latest.CompareAndSwap(-1, end)
			return r.latest.Load(), nil
		}
		if !kerr.IsRetriable(err) && !errors.Is(err, kerr.UnknownTopicOrPartition) {
			return 0, fmt.Errorf("end offset: %w", err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func listEnd(ctx context.Context, cl *kgo.Client, topic string, partition int32, committed bool) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	if committed {
		req.IsolationLevel = 1
	}
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = partition
	rp.Timestamp = -1 // the end
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.Partition == partition {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return 0, err
				}
				return p.Offset, nil
			}
		}
	}
	return 0, fmt.Errorf("no end offset for partition %d: %w", partition, base.ErrNotFound)
}
