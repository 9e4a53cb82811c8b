package main

import (
	"fmt"

	"github.com/useprickle/prickle/shared/domain/task"
)

// lostOrPhantom compares the moves the load command saw succeed with the
// history: each must be there (else an update was lost), and the history
// may hold more only as many as calls ended without a known outcome.
func lostOrPhantom(history []task.Event, seen []move, unknown int) error {
	inHistory := map[move]int{}
	for _, e := range history {
		inHistory[move{e.Action, e.By, e.To}]++
	}
	for _, m := range seen {
		if inHistory[m] == 0 {
			return fmt.Errorf("lost update: %s by %s → %s succeeded but is not in the history", m.Action, m.By, m.To)
		}
		inHistory[m]--
	}
	extra := 0
	for _, n := range inHistory {
		extra += n
	}
	if extra > unknown {
		return fmt.Errorf("the history holds %d moves nobody saw succeed (only %d calls ended without a known outcome)", extra, unknown)
	}
	return nil
}
