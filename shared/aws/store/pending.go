package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"

	"github.com/useprickle/prickle/shared/domain/task"
)

// A move writes one item, the task, so it costs one conditional write and
// not a transaction: the task item carries its pending history lines (each
// move appends its own) until the tasks stream files them as HIST#<seq>
// items (see FileLine). Every read of history merges the two (mergeLines),
// so history is complete whether or not the filer has run.

// maxPending bounds the lines a task item carries: a move that would carry
// more (the filer is behind or down) files the older ones itself, in its
// own transaction.
const maxPending = 8

// lineRecord is one history line: the attributes of a HIST#<seq> item and
// an element of a task item's pending list. Move identifies the move that
// wrote it, so a retried write that already landed is recognised.
// The event is stored under its json names (marshalItem), seq beside it.
type lineRecord struct {
	Seq  int    `json:"seq"`
	Move string `json:"move,omitempty"`
	task.Event
}

func newLineRecord(seq int, move string, e task.Event) lineRecord {
	e.At = e.At.UTC()
	return lineRecord{Seq: seq, Move: move, Event: e}
}

func (l lineRecord) event() task.Event {
	e := l.Event
	e.Seq = l.Seq
	return e
}

// newWriteID names one conditional write (a move's line, a send claim), so
// its own retry after a first attempt that landed is known: 64 random bits, hex.
func newWriteID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("write id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// mergeLines is a task's history: its filed lines and the lines its item
// still carries, once each, oldest first.
func mergeLines(filed []lineRecord, pending []lineRecord) []task.Event {
	bySeq := make(map[int]lineRecord, len(filed)+len(pending))
	for _, l := range filed {
		bySeq[l.Seq] = l
	}
	for _, l := range pending {
		bySeq[l.Seq] = l
	}
	seqs := make([]int, 0, len(bySeq))
	for seq := range bySeq {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	events := make([]task.Event, len(seqs))
	for i, seq := range seqs {
		events[i] = bySeq[seq].event()
	}
	return events
}

// taskRead is what a move needs to know of the version it starts from: the
// stored item's pending lines and which of them the read saw filed.
type taskRead struct {
	version int
	pending []lineRecord
	filed   map[int]bool
}

// unfiled is the pending lines the read did not see filed, oldest first.
func (r taskRead) unfiled() []lineRecord {
	var out []lineRecord
	for _, l := range r.pending {
		if !r.filed[l.Seq] {
			out = append(out, l)
		}
	}
	return out
}

// maxReads bounds the remembered reads; past it they are forgotten at once
// (a move then reads its task again: one request more, never a wrong write).
const maxReads = 1024

// reads remembers, per task, the last read of its item, so the move that
// follows a read (Task, then ApplyMove or SaveSteps) knows the pending lines
// without reading again. A remembered read is used only for the version it
// read, and a version's pending lines never change, so it cannot be stale
// in a way that matters: a line it did not see filed is only kept longer.
type reads struct {
	mu sync.Mutex
	m  map[string]taskRead
}

func (r *reads) put(id string, tr taskRead) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil || len(r.m) >= maxReads {
		r.m = map[string]taskRead{}
	}
	r.m[id] = tr
}

func (r *reads) get(id string, version int) (taskRead, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tr, ok := r.m[id]
	return tr, ok && tr.version == version
}
