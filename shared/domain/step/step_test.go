package step_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
)

func TestCanonical(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{name: "sorts keys", in: `{"b":1,"a":2}`, want: `{"a":2,"b":1}`},
		{name: "sorts nested keys", in: `{"z":{"y":1,"x":[{"d":1,"c":2}]}}`, want: `{"z":{"x":[{"c":2,"d":1}],"y":1}}`},
		{name: "drops insignificant space", in: " {\n  \"command\" :\t\"git push\" ,\n  \"timeout\": 30\n}\n", want: `{"command":"git push","timeout":30}`},
		{name: "keeps space inside strings", in: `{"command":"  ls  -la "}`, want: `{"command":"  ls  -la "}`},
		{name: "keeps a huge exponent exactly", in: `{"x":1e400}`, want: `{"x":1e400}`},
		{name: "keeps a big integer exactly", in: `{"n":12345678901234567890}`, want: `{"n":12345678901234567890}`},
		{name: "keeps a long fraction exactly", in: `{"n":0.10000000000000000555111512312578}`, want: `{"n":0.10000000000000000555111512312578}`},
		{name: "keeps number spelling", in: `{"n":1.0}`, want: `{"n":1.0}`},
		{name: "does not escape HTML characters", in: `{"command":"make && rm -rf <dir>"}`, want: `{"command":"make && rm -rf <dir>"}`},
		{name: "decodes escapes to one spelling", in: `{"s":"\u00e9\u0041"}`, want: `{"s":"éA"}`},
		{name: "empty object", in: `{}`, want: `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := step.Canonical(json.RawMessage(c.in))
			if err != nil {
				t.Fatalf("Canonical(%s): %v", c.in, err)
			}
			if string(got) != c.want {
				t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}

func TestCanonicalSameBytesForTheSameCall(t *testing.T) {
	a, err := step.Canonical(json.RawMessage(`{"command":"git push origin main","env":{"B":"2","A":"1"},"n":12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := step.Canonical(json.RawMessage("{ \"n\" : 12345678901234567890,\n \"env\": {\"A\": \"1\", \"B\": \"2\"}, \"command\": \"git push origin main\" }"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("same call, different bytes:\n %s\n %s", a, b)
	}
}

func TestCanonicalRefusesWhatIsNotOneJSONValue(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `{"a":1} {"b":2}`, `{"a":1}garbage`, `nope`} {
		t.Run(in, func(t *testing.T) {
			if got, err := step.Canonical(json.RawMessage(in)); err == nil {
				t.Errorf("Canonical(%q) = %s, want an error", in, got)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	base := step.Fingerprint("tsk_1", "Bash", []byte(`{"command":"ls"}`))
	if base != step.Fingerprint("tsk_1", "Bash", []byte(`{"command":"ls"}`)) {
		t.Fatal("the same call has two fingerprints")
	}
	if len(base) != 64 {
		t.Errorf("fingerprint %q is not a hex sha256", base)
	}
	cases := []struct {
		name, task, tool, input string
	}{
		{name: "other task", task: "tsk_2", tool: "Bash", input: `{"command":"ls"}`},
		{name: "other tool", task: "tsk_1", tool: "Write", input: `{"command":"ls"}`},
		{name: "other input", task: "tsk_1", tool: "Bash", input: `{"command":"ls -la"}`},
		// Length prefixes keep the parts apart: moving a byte across a boundary is another call.
		{name: "task and tool boundary moved", task: "tsk_1B", tool: "ash", input: `{"command":"ls"}`},
		{name: "tool and input boundary moved", task: "tsk_1", tool: "Bash{", input: `"command":"ls"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := step.Fingerprint(c.task, c.tool, []byte(c.input)); got == base {
				t.Errorf("fingerprint of %s/%s/%s equals the base call's", c.task, c.tool, c.input)
			}
		})
	}
}

func TestEffective(t *testing.T) {
	expires := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		status step.Status
		at     time.Time
		want   step.Status
	}{
		{step.Pending, expires.Add(-time.Millisecond), step.Pending},
		{step.Pending, expires, step.Expired},
		{step.Pending, expires.Add(time.Hour), step.Expired},
		{step.Approved, expires.Add(-time.Nanosecond), step.Approved},
		{step.Approved, expires, step.Expired},
		// Decided or finished steps keep their status whatever the clock says.
		{step.Refused, expires.Add(time.Hour), step.Refused},
		{step.Consumed, expires.Add(time.Hour), step.Consumed},
		{step.Withdrawn, expires.Add(time.Hour), step.Withdrawn},
		{step.Expired, expires.Add(-time.Hour), step.Expired},
	}
	for _, c := range cases {
		name := string(c.status) + " at expiry" + c.at.Sub(expires).String()
		t.Run(name, func(t *testing.T) {
			s := step.Step{ID: "stp_1", Status: c.status, ExpiresAt: expires}
			got := s.Effective(c.at)
			if got.Status != c.want {
				t.Errorf("Effective(%v).Status = %s, want %s", c.at, got.Status, c.want)
			}
			if s.Status != c.status {
				t.Errorf("Effective changed the step it was called on")
			}
		})
	}
}

func TestLive(t *testing.T) {
	want := map[step.Status]bool{
		step.Pending: true, step.Approved: true, step.Refused: true,
		step.Expired: false, step.Withdrawn: false, step.Consumed: false,
	}
	for status, live := range want {
		t.Run(string(status), func(t *testing.T) {
			if got := (step.Step{Status: status}).Live(); got != live {
				t.Errorf("Live() = %v, want %v", got, live)
			}
		})
	}
}
