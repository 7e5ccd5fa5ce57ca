package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// SinkOptions is what a sink's WITH clause configures.
type SinkOptions struct {
	Brokers []string
	Topic   string
	Format  SinkFormat
	// TxnIDPrefix starts the transactional ids of the sink's
	// transactions; it must be unique per sink in the cluster and stay
	// the same across restarts (see doc.go, Sink).
	TxnIDPrefix string
	// TxnTimeout must exceed the longest time from a prepare to its
	// commit, recovery included (default 15 minutes, the broker's
	// default transaction.max.timeout.ms).
	TxnTimeout time.Duration
}

// ParseSinkOptions reads the options of a Kafka sink: connector,
// properties.bootstrap.server, topic, format ('json' for upsert JSON, the
// default, or 'debezium-json'), transactional.id.prefix and
// properties.transaction.timeout.ms. An unknown option or a bad value
// gives an error wrapping base.ErrInvalidArgument that names the option.
func ParseSinkOptions(opts map[string]string) (SinkOptions, error) {
	o := SinkOptions{Format: Upsert, TxnTimeout: defaultTxnTimeout}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		var err error
		switch k {
		case OptConnector:
			if v != ConnectorName {
				return SinkOptions{}, bad(k, v, "is not "+ConnectorName)
			}
		case OptBootstrap, OptBootstrapAlt:
			if o.Brokers, err = brokers(k, v); err != nil {
				return SinkOptions{}, err
			}
		case OptTopic:
			if o.Topic = strings.TrimSpace(v); o.Topic == "" {
				return SinkOptions{}, bad(k, v, "is empty")
			}
		case OptSinkFormat:
			switch f := SinkFormat(strings.ToLower(strings.TrimSpace(v))); f {
			case Upsert, "upsert-json":
				o.Format = Upsert
			case DebeziumSink:
				o.Format = f
			default:
				return SinkOptions{}, bad(k, v, "is not json (upsert) or debezium-json")
			}
		case OptTxnIDPrefix:
			if o.TxnIDPrefix = strings.TrimSpace(v); o.TxnIDPrefix == "" {
				return SinkOptions{}, bad(k, v, "is empty")
			}
		case OptTxnTimeout:
			ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil || ms <= 0 {
				return SinkOptions{}, bad(k, v, "is not a whole number of milliseconds >= 1")
			}
			o.TxnTimeout = time.Duration(ms) * time.Millisecond
		default:
			return SinkOptions{}, suggest.UnknownOption("kafka sink: ", k,
				[]string{OptConnector, OptBootstrap, OptTopic, OptSinkFormat, OptTxnIDPrefix, OptTxnTimeout})
		}
	}
	if len(o.Brokers) == 0 {
		return SinkOptions{}, fmt.Errorf("kafka sink: option %q is required: %w", OptBootstrap, base.ErrInvalidArgument)
	}
	if o.Topic == "" {
		return SinkOptions{}, fmt.Errorf("kafka sink: option %q is required: %w", OptTopic, base.ErrInvalidArgument)
	}
	return o, nil
}

// prepared is the descriptor of a prepared epoch, kept in checkpoints
// until its commit (JSON).
type prepared struct {
	TxnID string `json:"txn_id"`
	// ProducerID and ProducerEpoch identify the open transaction; absent
	// for an epoch without messages, which opens none.
	ProducerID    int64 `json:"producer_id,omitempty"`
	ProducerEpoch int16 `json:"producer_epoch,omitempty"`
	Messages      int   `json:"messages"`
}

// Sink is the two-phase-commit Committer of a Kafka sink subtask (see
// doc.go, Sink): Prepare writes an epoch's messages in a Kafka transaction
// of its own and leaves it open; Commit commits it. Use NewSinkOperator
// to run it: the operator also aborts the transactions a failed attempt
// left open and closes the clients.
type Sink struct {
	opts SinkOptions
	enc  *Encoder

	mu struct {
		sync.Mutex
		admin *kgo.Client
		// open holds the producer of each epoch prepared by this
		// attempt and not committed yet.
		open map[base.Epoch]*kgo.Client
		// swept says the transactions a previous attempt left open were
		// aborted (on the first Prepare).
		swept bool
	}
}

// NewSink returns the Committer of one sink subtask attempt writing
// changes of cols, keyed by the primary-key columns pk (names; needed by
// the upsert format).
func NewSink(o SinkOptions, cols []catalog.Column, pk []string) (*Sink, error) {
	var key []int
	for _, name := range pk {
		i := slices.IndexFunc(cols, func(c catalog.Column) bool { return c.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("kafka sink %s: primary-key column %q is not a column: %w", o.Topic, name, base.ErrInvalidArgument)
		}
		key = append(key, i)
	}
	if o.Format == Upsert && len(key) == 0 {
		return nil, fmt.Errorf("kafka sink %s: format json writes upserts and needs a primary key: %w", o.Topic, base.ErrInvalidArgument)
	}
	if o.TxnIDPrefix == "" {
		return nil, fmt.Errorf("kafka sink %s: no transactional id prefix (option %q): %w", o.Topic, OptTxnIDPrefix, base.ErrInvalidArgument)
	}
	if o.TxnTimeout <= 0 {
		o.TxnTimeout = defaultTxnTimeout
	}
	s := &Sink{opts: o, enc: NewEncoder(cols, key, o.Format)}
	s.mu.open = map[base.Epoch]*kgo.Client{}
	return s, nil
}

// TxnID returns the transactional id of subtask's epoch e.
func (s *Sink) TxnID(subtask int, e base.Epoch) string {
	return fmt.Sprintf("%s-%d-%d", s.opts.TxnIDPrefix, subtask, e)
}

func (s *Sink) adminLocked() (*kgo.Client, error) {
	if s.mu.admin == nil {
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.opts.Brokers...))
		if err != nil {
			return nil, fmt.Errorf("kafka sink %s: client: %v: %w", s.opts.Topic, err, base.ErrInvalidArgument)
		}
		s.mu.admin = cl
	}
	return s.mu.admin, nil
}

// requestTimeout bounds one prepare or commit's talk with the cluster.
const requestTimeout = time.Minute

// Prepare implements operator.Committer: epoch e's messages go into a
// new transaction under the epoch's transactional id, flushed and left
// open. Initializing the id fences any producer of a previous attempt
// that used it and aborts its transaction. An epoch without messages
// opens no transaction but still initializes its id, so that the ids of
// prepared epochs stay contiguous for the sweep after a restore.
func (s *Sink) Prepare(subtask int, e base.Epoch, chunks []*types.Chunk) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	txid := s.TxnID(subtask, e)
	if !s.mu.swept {
		if err := s.sweepLocked(ctx, subtask, e); err != nil {
			return nil, err
		}
		s.mu.swept = true
	}
	msgs := s.enc.Encode(chunks)
	if len(msgs) == 0 {
		if _, _, err := s.initLocked(ctx, txid); err != nil {
			return nil, err
		}
		return json.Marshal(prepared{TxnID: txid})
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.opts.Brokers...), kgo.TransactionalID(txid), kgo.TransactionTimeout(s.opts.TxnTimeout),
		kgo.DefaultProduceTopic(s.opts.Topic))
	if err != nil {
		return nil, fmt.Errorf("kafka sink %s: client: %v: %w", s.opts.Topic, err, base.ErrInvalidArgument)
	}
	fail := func(err error) ([]byte, error) {
		cl.Close()
		return nil, fmt.Errorf("kafka sink %s, epoch %d (transaction %s): %w", s.opts.Topic, e, txid, err)
	}
	if err := cl.BeginTransaction(); err != nil {
		return fail(err)
	}
	var (
		pmu      sync.Mutex
		firstErr error
	)
	for _, m := range msgs {
		cl.Produce(ctx, &kgo.Record{Key: m.Key, Value: m.Value}, func(_ *kgo.Record, err error) {
			if err != nil {
				pmu.Lock()
				firstErr = cmpOr(firstErr, err)
				pmu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return fail(err)
	}
	if firstErr != nil {
		return fail(firstErr)
	}
	pid, pepoch, err := cl.ProducerID(ctx)
	if err != nil {
		return fail(err)
	}
	s.mu.open[e] = cl
	return json.Marshal(prepared{TxnID: txid, ProducerID: pid, ProducerEpoch: pepoch, Messages: len(msgs)})
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Commit implements operator.Committer: it commits the epoch's
// transaction, through the producer that opened it, or after a restore by
// an EndTxn request with the producer id and epoch the descriptor holds.
// Committing an epoch again is a no-op (the broker reports a retried
// commit of a completed transaction as a success). A transaction the
// broker aborted meanwhile (its timeout passed) cannot be committed: that
// is an error naming it, since its messages are lost.
func (s *Sink) Commit(subtask int, e base.Epoch, desc []byte) error {
	var p prepared
	if err := json.Unmarshal(desc, &p); err != nil {
		return fmt.Errorf("kafka sink %s, epoch %d: prepared descriptor: %v: %w", s.opts.Topic, e, err, base.ErrCorruption)
	}
	if p.Messages == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if cl, ok := s.mu.open[e]; ok {
		err := cl.EndTransaction(ctx, kgo.TryCommit)
		cl.Close()
		delete(s.mu.open, e)
		if err != nil {
			return fmt.Errorf("kafka sink %s, commit of epoch %d (transaction %s): %w", s.opts.Topic, e, p.TxnID, err)
		}
		return nil
	}
	admin, err := s.adminLocked()
	if err != nil {
		return err
	}
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID = p.TxnID
	req.ProducerID = p.ProducerID
	req.ProducerEpoch = p.ProducerEpoch
	req.Commit = true
	resp, err := req.RequestWith(ctx, admin)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		if errors.Is(err, kerr.InvalidTxnState) || errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerIDMapping) {
			return fmt.Errorf("kafka sink %s: re-commit of epoch %d (transaction %s, producer %d epoch %d, %d messages): the transaction was aborted or replaced (did its timeout of %s pass?): %v: %w",
				s.opts.Topic, e, p.TxnID, p.ProducerID, p.ProducerEpoch, p.Messages, s.opts.TxnTimeout, err, base.ErrConflict)
		}
		return fmt.Errorf("kafka sink %s: re-commit of epoch %d (transaction %s): %w", s.opts.Topic, e, p.TxnID, err)
	}
	return nil
}

// initLocked initializes txid (InitProducerID), which fences its earlier
// producers and aborts their open transaction; it returns the producer
// epoch, 0 when the id was new.
func (s *Sink) initLocked(ctx context.Context, txid string) (int64, int16, error) {
	admin, err := s.adminLocked()
	if err != nil {
		return 0, 0, err
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr(txid)
	req.TransactionTimeoutMillis = int32(s.opts.TxnTimeout / time.Millisecond)
	req.ProducerID, req.ProducerEpoch = -1, -1
	resp, err := req.RequestWith(ctx, admin)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("kafka sink %s: init transactional id %s: %w", s.opts.Topic, txid, err)
	}
	return resp.ProducerID, resp.ProducerEpoch, nil
}

// maxSweep bounds the sweep: more uncommitted epochs than this after a
// checkpoint means something else is wrong.
const maxSweep = 100_000

// sweepLocked aborts the transactions that earlier attempts left open
// under this subtask's ids from epoch e on: it initializes the ids e,
// e+1, ... until one that was never used. Every prepared epoch
// initialized its id, so the used ids above the restored checkpoint are
// contiguous (Flink's KafkaSink probes its transactional ids the same
// way on recovery).
func (s *Sink) sweepLocked(ctx context.Context, subtask int, e base.Epoch) error {
	for i := range base.Epoch(maxSweep) {
		_, epoch, err := s.initLocked(ctx, s.TxnID(subtask, e+i))
		if err != nil {
			return err
		}
		if epoch == 0 {
			return nil
		}
	}
	return fmt.Errorf("kafka sink %s: more than %d transactional ids in use after epoch %d: %w", s.opts.Topic, maxSweep, e, base.ErrConflict)
}

// Close closes the clients of this attempt, leaving its open transactions
// as they are: a prepared epoch of a completed checkpoint is committed by
// the next attempt, the others are aborted by its sweep.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for e, cl := range s.mu.open {
		cl.Close()
		delete(s.mu.open, e)
	}
	if s.mu.admin != nil {
		s.mu.admin.Close()
		s.mu.admin = nil
	}
	return nil
}

// sinkOperator is the two-phase-commit sink over a Sink that also closes
// the Sink's clients when the subtask closes.
type sinkOperator struct {
	*operator.TwoPhaseCommitSink
	sink *Sink
}

// NewSinkOperator returns the sink operator of one subtask attempt over
// s (operator.TwoPhaseCommitSink: prepare on epoch barriers, commit on
// checkpoint completion, re-commit on restore).
func NewSinkOperator(s *Sink) operator.Operator {
	return &sinkOperator{TwoPhaseCommitSink: operator.NewTwoPhaseCommitSink(s), sink: s}
}

// Close implements operator.Operator.
func (o *sinkOperator) Close() error {
	return errors.Join(o.TwoPhaseCommitSink.Close(), o.sink.Close())
}
