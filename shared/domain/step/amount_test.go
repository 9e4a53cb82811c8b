package step_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/useprickle/prickle/shared/domain/budget"
	"github.com/useprickle/prickle/shared/domain/step"
)

// TestAmountBoundsFitBudgetsAndFloats: amounts are counted in the budget's
// millionths (so AmountDecimals is that precision), the largest in micros
// fits an int64, and the longest amount within the bounds survives a
// float64 exactly.
func TestAmountBoundsFitBudgetsAndFloats(t *testing.T) {
	if math.Pow10(step.AmountDecimals) != budget.Scale {
		t.Errorf("AmountDecimals %d, but budgets count in 1/%d", step.AmountDecimals, budget.Scale)
	}
	if float64(step.MaxAmount)*budget.Scale >= math.MaxInt64 {
		t.Errorf("MaxAmount %d overflows int64 micros", step.MaxAmount)
	}
	longest := strconv.Itoa(step.MaxAmount-1) + "." + strings.Repeat("9", step.AmountDecimals)
	if v, _ := strconv.ParseFloat(longest, 64); strconv.FormatFloat(v, 'f', -1, 64) != longest {
		t.Errorf("%s reads back as %v from a float64", longest, v)
	}
}

func TestCheckAmountValue(t *testing.T) {
	for _, tc := range []struct {
		literal string
		want    error
	}{
		{"0", nil}, {"-0", nil}, {"0.0", nil}, {"0e-999999999999999999999", nil}, {"12.5", nil}, {"0.000001", nil},
		{"1e-6", nil}, {"0.0000010", nil}, {"1500e-7", nil}, {"1.5e3", nil}, {"1E9", nil}, {"999999.999999", nil},
		{"999999999.999999", nil}, {"1000000000", nil}, {"1000000000.000000", nil},
		{"-0.000001", step.ErrNegativeAmount}, {"-1e400", step.ErrNegativeAmount},
		{"1000000000.000001", step.ErrAmountTooLarge}, {"1e10", step.ErrAmountTooLarge}, {"1e308", step.ErrAmountTooLarge},
		{"1e400", step.ErrAmountTooLarge}, {"1e999999999999999999999", step.ErrAmountTooLarge},
		{"0.0000004", step.ErrAmountTooPrecise}, {"15e-7", step.ErrAmountTooPrecise}, {"0.12345678", step.ErrAmountTooPrecise},
		{"1e-400", step.ErrAmountTooPrecise}, {"1e-999999999999999999999", step.ErrAmountTooPrecise}, {"1e-9223372036854775808", step.ErrAmountTooPrecise},
	} {
		if err := step.CheckAmountValue(tc.literal); !errors.Is(err, tc.want) {
			t.Errorf("CheckAmountValue(%s) = %v, want %v", tc.literal, err, tc.want)
		}
	}
	for v, want := range map[float64]error{0.1: nil, 1e9: nil, 1e9 + 1: step.ErrAmountTooLarge, 4e-7: step.ErrAmountTooPrecise, 1e308: step.ErrAmountTooLarge,
		math.Inf(1): step.ErrAmountTooLarge, math.Inf(-1): step.ErrNegativeAmount, math.NaN(): step.ErrAmountNaN} {
		if err := (&step.Amount{Value: v, Unit: "USD"}).Check(); !errors.Is(err, want) {
			t.Errorf("Amount{%v}.Check() = %v, want %v", v, err, want)
		}
	}
	if err := (*step.Amount)(nil).Check(); err != nil {
		t.Errorf("no amount: %v", err)
	}
}
