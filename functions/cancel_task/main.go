// Command cancel_task is the Lambda function of the cancel_task tool (team.Service.CancelTask), reached by `Mcp-Name: cancel_task`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("cancel_task") }
