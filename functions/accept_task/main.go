// Command accept_task is the Lambda function of the accept_task tool (team.Service.AcceptTask), reached by `Mcp-Name: accept_task`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("accept_task") }
