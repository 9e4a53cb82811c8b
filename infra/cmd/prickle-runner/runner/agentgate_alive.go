//go:build unix

package runner

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// listening says whether the CLI still reads the gate's answer: the gate's
// stdout is a pipe to the CLI, and once the CLI is gone (killed while its gate
// held a call) the pipe has no reader, which poll reports as an error. Any
// other output (a file, a terminal, a test's buffer) counts as listening.
func listening(out io.Writer) func() bool {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	fd := int32(f.Fd())
	return func() bool { return !readerGone(fd) }
}

// readerGone reports a pipe's write end whose read end is closed.
func readerGone(fd int32) bool {
	fds := []unix.PollFd{{Fd: fd, Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLERR != 0
}
