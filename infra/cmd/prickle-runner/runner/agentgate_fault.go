package runner

import (
	"os"
	"syscall"
)

// gateFault fails the gate the way fault names (gateFaultEnv): exit1 exits
// 1, kill kills the process, anything else panics.
func gateFault(fault string) {
	switch fault {
	case "exit1":
		os.Exit(1)
	case "kill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	panic("prickle-runner gate: fault " + fault)
}
