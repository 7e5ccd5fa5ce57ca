package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

// AcquireVersion implements meta.Service (see meta/version for the
// semantics of both modes).
func (m *Meta) AcquireVersion(ctx context.Context, req meta.VersionRequest) (meta.Version, error) {
	if !req.Mode.Valid() {
		return meta.Version{}, fmt.Errorf("read mode %q must be %q or %q: %w", req.Mode, version.Strong, version.Weak, base.ErrInvalidArgument)
	}
	if len(req.Tables) == 0 {
		return meta.Version{}, fmt.Errorf("a read names no table: %w", base.ErrInvalidArgument)
	}
	if req.Holder == "" {
		return meta.Version{}, fmt.Errorf("a read names no holder for its pin: %w", base.ErrInvalidArgument)
	}
	if req.TTL < 0 {
		return meta.Version{}, fmt.Errorf("pin TTL %v is negative: %w", req.TTL, base.ErrInvalidArgument)
	}
	ttl := req.TTL
	if ttl == 0 {
		ttl = m.opts.PinTTL
	}
	for {
		if err := m.lock(); err != nil {
			return meta.Version{}, err
		}
		for _, t := range req.Tables {
			if _, err := m.mu.catalog.Table(t); err != nil {
				m.mu.Unlock()
				return meta.Version{}, fmt.Errorf("read: %w", err)
			}
		}
		res := m.mu.tracker.Resolve(m.mu.lineage.Groups(req.Tables), req.Mode)
		if res.Wait != nil {
			ch := m.mu.changed
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return meta.Version{}, fmt.Errorf("strong read of %v: %v: %w", req.Tables, res.Wait, ctx.Err())
			}
		}
		v, err := m.pinLocked(ctx, req.Holder, ttl, res)
		m.mu.Unlock()
		return v, err
	}
}

// pinLocked persists res's floors and a new pin, then publishes both.
func (m *Meta) pinLocked(ctx context.Context, holder string, ttl time.Duration, res version.Resolution) (meta.Version, error) {
	pin := m.mu.pins.Make(holder, res.Epochs, m.opts.Time.Now().Add(ttl))
	var b store.Batch
	for t, e := range res.RaiseFloors {
		b.Put(floorKey(t), mustJSON(e))
	}
	b.Put(pinKey(pin.ID), mustJSON(pin))
	b.Put(keyPinSeq, mustJSON(pin.ID+1))
	if err := m.apply(ctx, fmt.Sprintf("pin %d", pin.ID), b); err != nil {
		return meta.Version{}, err
	}
	m.mu.tracker.RaiseFloors(res.RaiseFloors)
	m.mu.pins.Add(pin)
	return meta.Version{Epochs: pin.Epochs, Groups: res.Groups, Pin: pin.ID, Expires: pin.Expires}, nil
}

// livePinLocked reports whether a pin counts at now: not expired, and not
// held by a lost job.
func (m *Meta) livePinLocked(p version.Pin, now time.Time) bool {
	if !p.Expires.After(now) {
		return false
	}
	if js, ok := m.mu.jobs[p.Holder]; ok && m.lost(js, now) {
		return false
	}
	return true
}

// RenewPin implements meta.Service.
func (m *Meta) RenewPin(ctx context.Context, id version.PinID, ttl time.Duration) (time.Time, error) {
	if ttl <= 0 {
		return time.Time{}, fmt.Errorf("pin %d: renewal TTL %v must be positive: %w", id, ttl, base.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return time.Time{}, err
	}
	defer m.mu.Unlock()
	now := m.opts.Time.Now()
	p, err := m.mu.pins.Get(id)
	if err != nil {
		return time.Time{}, err
	}
	if !m.livePinLocked(p, now) {
		if err := m.dropLapsedPinsLocked(ctx, now); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, fmt.Errorf("pin %d of %q has lapsed: %w", id, p.Holder, base.ErrNotFound)
	}
	p.Expires = now.Add(ttl)
	var b store.Batch
	b.Put(pinKey(id), mustJSON(p))
	if err := m.apply(ctx, fmt.Sprintf("renewal of pin %d", id), b); err != nil {
		return time.Time{}, err
	}
	if err := m.mu.pins.SetExpiry(id, p.Expires); err != nil {
		panic(fmt.Sprintf("service: pin %d vanished under the mutex: %v", id, err))
	}
	return p.Expires, nil
}

// ReleasePin implements meta.Service.
func (m *Meta) ReleasePin(ctx context.Context, id version.PinID) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	p, err := m.mu.pins.Get(id)
	if err != nil {
		return err
	}
	if !m.livePinLocked(p, m.opts.Time.Now()) {
		return fmt.Errorf("pin %d of %q has lapsed: %w", id, p.Holder, base.ErrNotFound)
	}
	var b store.Batch
	b.Delete(pinKey(id))
	if err := m.apply(ctx, fmt.Sprintf("release of pin %d", id), b); err != nil {
		return err
	}
	m.mu.pins.Remove(id)
	return nil
}

// PinnedEpoch implements meta.Service. It counts only live pins, so an
// expired pin or one of a lost job stops holding snapshots at once, without
// waiting for the sweeper.
func (m *Meta) PinnedEpoch(ctx context.Context, table catalog.ObjectName) (base.Epoch, bool, error) {
	if err := m.lock(); err != nil {
		return 0, false, err
	}
	defer m.mu.Unlock()
	now := m.opts.Time.Now()
	// A pin found dead here lets snapshot expiration drop what it held, so
	// its death must be final: delete it durably before answering, lest a
	// heartbeat or a restart bring its holder back and the pin with it.
	if err := m.dropLapsedPinsLocked(ctx, now); err != nil {
		return 0, false, err
	}
	var low base.Epoch
	found := false
	for _, p := range m.mu.pins.All() {
		e, has := p.Epochs[table]
		if !has || !m.livePinLocked(p, now) {
			continue
		}
		if !found || e < low {
			low, found = e, true
		}
	}
	return low, found, nil
}

// dropLapsedPinsLocked deletes, durably, every pin that is no longer live
// (expired, or held by a lost job), so that a lapse is final.
func (m *Meta) dropLapsedPinsLocked(ctx context.Context, now time.Time) error {
	var dead []version.PinID
	for _, p := range m.mu.pins.All() {
		if !m.livePinLocked(p, now) {
			dead = append(dead, p.ID)
		}
	}
	return m.dropPinsLocked(ctx, dead, "lapsed pins")
}

// dropPinsLocked deletes pins from the store, then from memory.
func (m *Meta) dropPinsLocked(ctx context.Context, ids []version.PinID, why string) error {
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), sweepChunk)]
		ids = ids[len(chunk):]
		var b store.Batch
		for _, id := range chunk {
			b.Delete(pinKey(id))
		}
		if err := m.apply(ctx, "deletion of "+why, b); err != nil {
			return err
		}
		for _, id := range chunk {
			m.mu.pins.Remove(id)
		}
	}
	return nil
}

// sweepChunk bounds the operations of one sweep write, well under etcd's
// default limit of 128 operations per transaction. A sweep's changes need
// not be atomic together: each removes something already dead.
const sweepChunk = 64

// sweepOp is one change of a sweep: its store operation and, once that is
// durable, its effect on the state.
type sweepOp struct {
	put    []byte // nil: delete
	key    string
	effect func()
}

// Sweep runs one pass of the sweeper at the current time: it persists lost
// jobs as FAILED and deletes their pins and every expired pin, in writes of
// at most sweepChunk operations. The background sweeper calls it every
// SweepInterval; tests call it directly.
func (m *Meta) Sweep(ctx context.Context) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	now := m.opts.Time.Now()
	var ops []sweepOp
	for _, p := range m.mu.pins.All() {
		if !m.livePinLocked(p, now) {
			id := p.ID
			ops = append(ops, sweepOp{key: pinKey(id), effect: func() { m.mu.pins.Remove(id) }})
		}
	}
	names := make([]string, 0, len(m.mu.jobs))
	for name := range m.mu.jobs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		js := m.mu.jobs[name]
		if !m.lost(js, now) {
			continue
		}
		rec := jobRecord{Status: meta.JobFailed, Checkpoint: js.rec.Checkpoint,
			Reason: fmt.Sprintf("no heartbeat since %s (timeout %v)", js.lastSeen.UTC().Format(time.RFC3339Nano), m.opts.HeartbeatTimeout)}
		ops = append(ops, sweepOp{key: jobKey(name), put: mustJSON(rec), effect: func() {
			m.log.Warn("job lost: no heartbeat", "job", name, "reason", rec.Reason)
			js.rec = rec
		}})
	}
	for len(ops) > 0 {
		chunk := ops[:min(len(ops), sweepChunk)]
		ops = ops[len(chunk):]
		var b store.Batch
		for _, op := range chunk {
			if op.put != nil {
				b.Put(op.key, op.put)
			} else {
				b.Delete(op.key)
			}
		}
		if err := m.apply(ctx, "sweep of lost jobs and lapsed pins", b); err != nil {
			return err
		}
		for _, op := range chunk {
			op.effect()
		}
	}
	return nil
}

func (m *Meta) sweepLoop() {
	defer close(m.done)
	for {
		t := m.opts.Time.NewTimer(m.opts.SweepInterval)
		select {
		case <-m.stop:
			t.Stop()
			return
		case <-t.C():
		}
		if err := m.Sweep(context.Background()); err != nil && !errors.Is(err, base.ErrClosed) {
			m.log.Error("meta service sweep failed", "err", err)
		}
	}
}
