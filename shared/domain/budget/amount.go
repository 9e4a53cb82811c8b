package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// A budget caps declared spend: request_step's amount is what the agent
// says a call spends, and Prickle never sees the charge itself. So a budget
// allows a call without asking only when it can check the declared amount
// against the call: the number the call's input holds where the budget
// reads it (AmountField, of AmountTool's calls) must be exactly the
// declared amount, and then the debit is never less than the input says.

// maxNumber bounds the text of a number read from an input, so that reading
// it exactly stays cheap.
const maxNumber = 64

// ReadsFrom says where the budget reads a call's amount, for people; empty
// when it names no field.
func (b Budget) ReadsFrom() string {
	switch {
	case b.AmountField == "":
		return ""
	case b.AmountTool == "":
		return fmt.Sprintf("input field %s of any call", b.AmountField)
	}
	return fmt.Sprintf("input field %s of %s calls", b.AmountField, b.AmountTool)
}

// AmountOf reads the amount a call of tool, with canonical input, holds
// where the budget reads it, rounded up to a millionth. When it cannot,
// why says why, in words for the owner and the agent.
func (b Budget) AmountOf(tool string, canonical []byte) (amount Micros, why string) {
	if b.AmountField == "" {
		return 0, fmt.Sprintf("%s's %s budget does not say which input field holds a call's amount, so it allows nothing without asking", b.Owner, b.Unit)
	}
	if b.AmountTool != "" && tool != b.AmountTool {
		return 0, fmt.Sprintf("%s's %s budget reads amounts from %s calls only, not %s", b.Owner, b.Unit, b.AmountTool, tool)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(canonical, &obj) != nil {
		return 0, "the call's input is not an object"
	}
	missing := fmt.Sprintf("the call's input holds no amount in field %s", b.AmountField)
	raw, ok := obj[b.AmountField]
	if !ok {
		return 0, missing
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return 0, missing
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, missing
	}
	m, ok := ceilMicros(n.String())
	if !ok {
		return 0, fmt.Sprintf("the call's input holds %.20s in field %s: not an amount between 0 and %d", n, b.AmountField, MaxLimit)
	}
	return m, ""
}

// ceilMicros reads a JSON number exactly, in millionths rounded up; ok is
// false for a negative number, one above MaxLimit, or one written too long
// or with an exponent beyond ±30.
func ceilMicros(s string) (Micros, bool) {
	if len(s) > maxNumber {
		return 0, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e < -30 || e > 30 {
			return 0, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(MaxLimit, 1)) > 0 {
		return 0, false
	}
	r.Mul(r, big.NewRat(Scale, 1))
	q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if rem.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return Micros(q.Int64()), true
}

// Checked says why the budget cannot allow a spending step of tool, with
// canonical input, declaring declared, without asking its owner; empty when
// the input holds exactly the declared amount where the budget reads it.
func (b Budget) Checked(tool string, canonical []byte, declared Micros) (why string) {
	read, why := b.AmountOf(tool, canonical)
	if why != "" {
		return why
	}
	if read != declared {
		return fmt.Sprintf("the step declares %s %s but its input's %s says %s %s", declared, b.Unit, b.AmountField, read, b.Unit)
	}
	return ""
}
