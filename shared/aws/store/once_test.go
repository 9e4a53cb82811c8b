package store

import (
	"testing"
	"time"
)

// An update's id stays in its item while a retry can come: no update sent in
// the same slot or the next clears the set it went to; one two slots later
// does, so the item holds about three slots of ids at most.
func TestOnceSetsRotateBySlot(t *testing.T) {
	start := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for step := range 2 * onceSlots {
		sent := start.Add(time.Duration(step) * onceSlot)
		w, err := newOnceWrite(sent)
		if err != nil {
			t.Fatal(err)
		}
		if w.set == w.stale {
			t.Fatalf("slot %d adds to the set it clears: %s", step, w.set)
		}
		for later, clears := range map[time.Duration]bool{0: false, onceSlot / 2: false, onceSlot: false, 2 * onceSlot: true} {
			l, _ := newOnceWrite(sent.Add(later))
			if got := l.stale == w.set; got != clears {
				t.Errorf("an update %v after one in %s (set %s) clears %s: %v, want %v", later, sent.Format("15:04"), w.set, l.stale, got, clears)
			}
		}
	}
	a, _ := newOnceWrite(start)
	b, _ := newOnceWrite(start)
	if a.id == b.id || len(a.id) != 16 {
		t.Errorf("ids %q and %q; want two distinct 16-digit ids", a.id, b.id)
	}
}
