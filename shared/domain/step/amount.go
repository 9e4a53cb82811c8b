package step

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Amount is what a spending step would spend.
type Amount struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Bounds of amount.value beyond the published schema: budgets count in
// millionths of a unit (so no finer amount), and no amount is larger than
// MaxAmount, so every amount within the bounds has at most 15 significant
// digits: a float64 holds it exactly, and DynamoDB stores it as written.
const (
	MaxAmount      = 1_000_000_000
	AmountDecimals = 6
)

// Errors of an amount.value outside its bounds; each names the limit.
var (
	// ErrNegativeAmount refuses an amount below zero: a step's amount is what
	// it would spend, and a negative one would read as money coming back (and
	// give back budget if it were ever debited).
	ErrNegativeAmount   = errors.New("is below zero: a step's amount is what it would spend, 0 or more")
	ErrAmountTooLarge   = fmt.Errorf("is above %d, the largest amount a step may name", MaxAmount)
	ErrAmountTooPrecise = fmt.Errorf("has more than %d decimal places: amounts are counted in millionths of their unit", AmountDecimals)
	ErrAmountNaN        = errors.New("is not a number")
)

// Check refuses an amount outside the bounds; no amount is fine.
func (a *Amount) Check() error {
	if a == nil {
		return nil
	}
	return CheckAmountValue(strconv.FormatFloat(a.Value, 'g', -1, 64))
}

// CheckAmountValue checks amount.value as a JSON number literal, exactly
// as written: 0 or more, at most MaxAmount, at most AmountDecimals decimal
// places (1e400 is too large, 1e-400 too precise, 1.5e3 is 1500).
func CheckAmountValue(literal string) error {
	v, err := strconv.ParseFloat(literal, 64)
	var numErr *strconv.NumError
	if err != nil && !(errors.As(err, &numErr) && numErr.Err == strconv.ErrRange) {
		return fmt.Errorf("%q is not a number", literal)
	}
	switch {
	case math.IsNaN(v):
		return ErrAmountNaN
	case v < 0:
		return ErrNegativeAmount
	case v > MaxAmount:
		return ErrAmountTooLarge
	case decimalPlaces(literal) > AmountDecimals:
		return ErrAmountTooPrecise
	}
	return nil
}

// decimalPlaces is how many digits a number literal needs after the
// decimal point when written out in full ("0.50" 1, "15e-7" 7, "1.5e3" 0).
func decimalPlaces(literal string) int {
	mantissa, exp, _ := strings.Cut(strings.ToLower(literal), "e")
	whole, frac, _ := strings.Cut(strings.TrimLeft(mantissa, "+-"), ".")
	digits := strings.TrimRight(whole+frac, "0")
	if strings.Trim(digits, "0") == "" {
		return 0 // zero, however written
	}
	trailingZeros := len(whole+frac) - len(digits)
	e := 0
	if exp != "" {
		e, _ = strconv.Atoi(exp) // beyond int it is ±MaxInt: clamped below
	}
	// Clamped far beyond any literal's length, so the sum cannot overflow.
	e = min(max(e, -(1<<40)), 1<<40)
	return max(0, len(frac)-trailingZeros-e)
}
