// Command mcp is the MCP front: server/discover, initialize, tools/list, ping, and tool calls from clients that send no routing header.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP() }
