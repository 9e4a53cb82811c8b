package team_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// TestRequestStepRefusesInputsOverTheBounds: the service itself refuses an
// input over a bound (the catalog answers -32602 before it is reached), naming
// the limit; nothing is stored and the task stays where it was.
func TestRequestStepRefusesInputsOverTheBounds(t *testing.T) {
	r := newStepRoom(t)
	for input, want := range map[string]string{
		`{"a":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`: "deeper than 32 levels",
		`{"a":[` + strings.Repeat("0,", 1000) + `0]}`:                       "more than 1000 keys and array elements",
		`{"command":"` + strings.Repeat("x", 1_000_000) + `"}`:              "the limit of a step's input size is 65536 bytes",
	} {
		_, err := r.svc.RequestStep(ctx, r.run, push(input))
		var refusal *task.Refusal
		if !errors.As(err, &refusal) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was stored or sent") {
			t.Errorf("%.30s…: %v, want a refusal naming %q", input, err, want)
		}
	}
	steps, err := r.store.StepsForTask(ctx, r.task.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := r.store.Task(ctx, r.task.ID)
	if len(steps) != 0 || got.State != r.task.State {
		t.Fatalf("refused inputs left %d steps and task %s; want none and %s", len(steps), got.State, r.task.State)
	}
}

// TestRequestStepRefusesAmountsOutOfBounds: a step cannot spend less than
// nothing (a negative amount would read as money coming back), more than
// step.MaxAmount, or in finer steps than millionths; such an amount is
// refused naming the limit and nothing is stored. Zero and amounts at the
// bounds are asked as before.
func TestRequestStepRefusesAmountsOutOfBounds(t *testing.T) {
	r := newStepRoom(t)
	for _, tc := range []struct {
		value float64
		want  string
	}{
		{-0.000001, "amount.value is below zero"}, {-5, "amount.value is below zero"}, {-1e300, "amount.value is below zero"},
		{math.Inf(-1), "amount.value is below zero"}, {math.NaN(), "amount.value is not a number"},
		{1e308, "amount.value is above 1000000000"}, {1e9 + 1, "amount.value is above 1000000000"}, {math.Inf(1), "amount.value is above"},
		{0.0000004, "amount.value has more than 6 decimal places"}, {1e-300, "amount.value has more than 6 decimal places"},
		{12.3456789, "amount.value has more than 6 decimal places"},
	} {
		in := push(pushInput)
		in.Kind, in.Amount = "spending", &step.Amount{Value: tc.value, Unit: "USD"}
		_, err := r.svc.RequestStep(ctx, r.run, in)
		var refusal *task.Refusal
		if !errors.As(err, &refusal) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was stored or sent") {
			t.Errorf("amount %v: %v, want a refusal naming %q", tc.value, err, tc.want)
		}
	}
	if steps, _ := r.store.StepsForTask(ctx, r.task.ID); len(steps) != 0 {
		t.Fatalf("refused amounts left %d steps", len(steps))
	}
	for _, v := range []float64{0, 5, 0.000001, 999999.999999, 1e9} {
		in := push(fmt.Sprintf(`{"command":"pay %v"}`, v))
		in.Kind, in.Amount = "spending", &step.Amount{Value: v, Unit: "USD"}
		if _, err := r.svc.RequestStep(ctx, r.run, in); err != nil {
			t.Errorf("amount %v: %v, want asked", v, err)
		}
	}
}
