// Command get_task is the Lambda function of the get_task tool (team.Service.GetTask), reached by `Mcp-Name: get_task`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("get_task") }
