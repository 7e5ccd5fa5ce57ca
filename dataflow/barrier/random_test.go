package barrier

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/internal/base"
)

// TestRandomHistoriesCutConsistently drives the handler through seeded
// random histories (sends, takes, timeouts, aborts on 1-3 channels, every
// policy, barriers crossing) and checks the two properties recovery rests
// on, for every completed checkpoint and every channel:
//
//   - consistent cut: what the operator consumed from the channel before
//     the snapshot, followed by the channel state, is exactly what the
//     channel carried before the checkpoint's barrier;
//   - epoch alignment: between close-epoch E-1 and close-epoch E the
//     operator processes only chunks sent between the epoch barriers E-1
//     and E of their channel.
func TestRandomHistoriesCutConsistently(t *testing.T) {
	for seed := range uint64(300) {
		for _, p := range []Policy{PolicyAligned, PolicyUnaligned, PolicyAlignedTimeout} {
			t.Run(fmt.Sprintf("%s/%d", p, seed), func(t *testing.T) { randomHistory(t, seed, p) })
		}
	}
}

func randomHistory(t *testing.T, seed uint64, p Policy) {
	rng := rand.New(rand.NewPCG(seed, uint64(p)))
	inputs := 1 + rng.IntN(3)
	var sb strings.Builder
	x := &harness{out: &sb}
	x.init(inputs, p)

	// Each channel's script: chunks, epoch barriers 1..4 and checkpoint
	// barriers 1..4, checkpoint barriers at random places.
	type item struct {
		m     message.Message
		epoch base.Epoch // for chunks: the epoch they belong to
	}
	scripts := make([][]item, inputs)
	for ch := range scripts {
		cp := base.CheckpointID(1)
		n := 0
		for e := base.Epoch(1); e <= 4; e++ {
			for range rng.IntN(4) {
				if cp <= 4 && rng.IntN(3) == 0 {
					scripts[ch] = append(scripts[ch], item{m: message.Barrier(cp, p.BarrierMode())})
					cp++
				}
				scripts[ch] = append(scripts[ch], item{m: message.Chunk(textChunk(fmt.Sprintf("c%d-%d", ch, n))), epoch: e})
				n++
			}
			scripts[ch] = append(scripts[ch], item{m: message.EpochBarrier(e)})
		}
		for ; cp <= 4; cp++ {
			scripts[ch] = append(scripts[ch], item{m: message.Barrier(cp, p.BarrierMode())})
		}
		scripts[ch] = append(scripts[ch], item{m: message.EndOfStream()})
	}
	chunkEpoch := map[string]base.Epoch{}
	before := map[base.CheckpointID][][]string{} // per checkpoint, per channel: what preceded its barrier
	for ch, s := range scripts {
		var sent []string
		for _, it := range s {
			switch it.m.Kind {
			case message.KindChunk:
				chunkEpoch[label(it.m)] = it.epoch
				sent = append(sent, label(it.m))
			case message.KindEpochBarrier:
				sent = append(sent, label(it.m))
			case message.KindCheckpointBarrier:
				id := it.m.Checkpoint.ID
				if before[id] == nil {
					before[id] = make([][]string, inputs)
				}
				before[id][ch] = slices.Clone(sent)
			}
		}
	}

	next := make([]int, inputs)
	send := func(ch int) bool {
		if next[ch] == len(scripts[ch]) {
			return false
		}
		m := scripts[ch][next[ch]].m
		next[ch]++
		var err error
		if m.IsPriority() {
			err = x.queues[ch].PutHead(m)
		} else {
			err = x.queues[ch].Put(m, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		return true
	}
	for step := 0; step < 2000; step++ {
		ch := rng.IntN(inputs)
		switch r := rng.IntN(20); {
		case r < 9:
			send(ch)
		case r < 18:
			x.take(ch)
		case r == 18:
			if cp, ok := x.h.Current(); ok {
				x.apply(x.h.OnTimeout(cp), message.Message{})
			}
		default:
			if cp, ok := x.h.Current(); ok && rng.IntN(4) == 0 {
				x.apply(x.h.OnAbort(cp), message.Message{})
			}
		}
	}
	for progress := true; progress; {
		progress = false
		for ch := range inputs {
			if send(ch) || x.take(ch) {
				progress = true
			}
		}
	}
	if !strings.Contains(sb.String(), "  end-of-stream") {
		t.Fatalf("history did not end:\n%s", sb.String())
	}
	for _, cp := range x.completed {
		for ch := range inputs {
			got := append(slices.Clone(x.cut[cp][ch]), x.chanState[cp][ch]...)
			if want := before[cp][ch]; !slices.Equal(got, want) {
				t.Fatalf("checkpoint %d channel %d: state %v + channel state %v != sent before barrier %v\n%s",
					cp, ch, x.cut[cp][ch], x.chanState[cp][ch], want, sb.String())
			}
		}
	}
	// Epoch alignment over the processed sequence.
	cur := base.Epoch(1)
	for _, l := range x.processed {
		if strings.HasPrefix(l, "E") {
			cur++
			continue
		}
		if chunkEpoch[l] != cur {
			t.Fatalf("chunk %s of epoch %d processed in epoch %d\n%s", l, chunkEpoch[l], cur, sb.String())
		}
	}
	if cur != 5 {
		t.Fatalf("closed %d epochs, want 4", cur-1)
	}
}
