package main

import (
	"fmt"
	"strconv"

	"github.com/useprickle/prickle/shared/aws/store/storetest"
)

// loseAnswers puts storetest's proxy between the stack and the emulator at
// endpoint, losing the answer of one write in every (PRICKLE_LOSE_ANSWERS):
// the write lands, the connection breaks instead of the answer, and the
// SDK retries. The SDK's last attempt of a call keeps its answer: under
// twenty racing writers one call's every attempt could otherwise be the
// N-th write, and the fault run checks what a recovered loss leaves (a
// call failing as a whole is the faults tests' case). It returns the endpoint the stack then uses and the proxy.
func loseAnswers(endpoint string, every int) (string, *storetest.Proxy, error) {
	p, err := storetest.Start(endpoint)
	if err != nil {
		return "", nil, err
	}
	p.Inject(storetest.Rule{Fault: storetest.ResetAnswer, Writes: true, Every: every, AnswerLast: true})
	return p.URL, p, nil
}

// parseLoseAnswers reads PRICKLE_LOSE_ANSWERS: empty or 0 loses nothing,
// N ≥ 2 loses one write's answer in N.
func parseLoseAnswers(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n == 1 || n < 0 {
		return 0, fmt.Errorf("PRICKLE_LOSE_ANSWERS=%q: want N ≥ 2 (one write's answer in N lost) or 0", v)
	}
	return n, nil
}
