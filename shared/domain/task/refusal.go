package task

import "fmt"

// Refusal is a domain "no": the call was understood but the rules forbid it.
// Tools report it to the agent as an isError result, never as a protocol fault.
type Refusal struct {
	Msg string
}

func (r *Refusal) Error() string { return r.Msg }

// Refusef builds a Refusal with a formatted message.
func Refusef(format string, args ...any) *Refusal {
	return &Refusal{Msg: fmt.Sprintf(format, args...)}
}
