// Package task holds the task domain: what a task is, the states it moves
// through, who may move it, and the evidence rules a result must satisfy. It
// is pure: no AWS, no MCP, no clock of its own.
package task
