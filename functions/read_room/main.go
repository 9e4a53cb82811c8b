// Command read_room is the Lambda function of the read_room tool (team.Service.ReadRoom), reached by `Mcp-Name: read_room`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("read_room") }
