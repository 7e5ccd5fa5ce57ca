package write

import (
	"testing"
	"time"
)

// TestHurriedCompactionSkipsTheSlots checks that a compaction waiting
// for a slot starts without one once a prepare waits for it
// (compaction.hurry), and that one not hurried keeps waiting.
func TestHurriedCompactionSkipsTheSlots(t *testing.T) {
	var held []func()
	for range cap(compactionSlots) {
		held = append(held, acquireCompactionSlot(nil))
	}
	defer func() {
		for _, r := range held {
			r()
		}
	}()
	c := &compaction{urgent: make(chan struct{})}
	started := make(chan func())
	go func() { started <- acquireCompactionSlot(c.urgent) }()
	select {
	case <-started:
		t.Fatal("a compaction started while every slot was held")
	case <-time.After(50 * time.Millisecond):
	}
	_, _, _, before := BackgroundCompactions()
	c.hurry()
	c.hurry() // a second wait does not close the channel twice
	select {
	case release := <-started:
		release()
	case <-time.After(10 * time.Second):
		t.Fatal("a hurried compaction still waits for a slot")
	}
	if _, _, _, after := BackgroundCompactions(); after != before+1 {
		t.Fatalf("hurried compactions %d, want %d", after, before+1)
	}
}
