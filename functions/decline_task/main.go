// Command decline_task is the Lambda function of the decline_task tool (team.Service.DeclineTask), reached by `Mcp-Name: decline_task`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("decline_task") }
