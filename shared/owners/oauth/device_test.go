package oauth

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestUserCodes: a code is read however an owner types it, shown one way,
// and anything else is no code (so nothing else reaches a lookup).
func TestUserCodes(t *testing.T) {
	for typed, want := range map[string]string{
		"BCDF-GHJK": "BCDFGHJK", "bcdf-ghjk": "BCDFGHJK", " BCDF GHJK ": "BCDFGHJK", "BCDFGHJK": "BCDFGHJK",
		"BCDF-GHJ": "", "BCDF-GHJKL": "", "ABCD-EFGH": "", "BCDF-GHJ1": "", "<scrip": "", "": "",
		strings.Repeat("B", 40): "",
	} {
		if got := normalUserCode(typed); got != want {
			t.Errorf("normalUserCode(%q) = %q, want %q", typed, got, want)
		}
	}
	if got := formatUserCode("BCDFGHJK"); got != "BCDF-GHJK" {
		t.Errorf("formatUserCode = %q", got)
	}
}

// TestRunnerNames: what a runner calls itself is clipped and printable.
func TestRunnerNames(t *testing.T) {
	for sent, want := range map[string]string{
		"alice-laptop": "alice-laptop", "": "a runner", "\x00\x1b[31m": "[31m", " box\n": "box",
		strings.Repeat("x", 100): strings.Repeat("x", maxRunnerName),
	} {
		if got := runnerName(sent); got != want {
			t.Errorf("runnerName(%q) = %q, want %q", sent, got, want)
		}
	}
}

// TestTheDocsStateTheDeviceBounds: docs/security.md states the device
// grant's lifetimes and bounds as these constants are.
func TestTheDocsStateTheDeviceBounds(t *testing.T) {
	b, err := os.ReadFile("../../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	window := int(DeviceRateWindow / time.Minute)
	for _, want := range []string{
		fmt.Sprintf("lasts %d minutes, and is exchanged once", int(DeviceCodeLifespan/time.Minute)),
		fmt.Sprintf("A poll sooner than %d s after", int(DeviceInterval/time.Second)),
		fmt.Sprintf("after %d minutes `expired_token`", int(DeviceCodeLifespan/time.Minute)),
		fmt.Sprintf("%d device codes per network per %d minutes", DeviceRequestsPerNetwork, window),
		fmt.Sprintf("%d codes looked up or decided per owner and %d decisions per code per %d minutes", CodeAttemptsPerOwner, AttemptsPerCode, window),
		fmt.Sprintf("clipped to %d printable characters", maxRunnerName),
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/security.md does not say %q", want)
		}
	}
}
