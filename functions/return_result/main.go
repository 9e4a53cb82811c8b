// Command return_result is the Lambda function of the return_result tool (team.Service.ReturnResult), reached by `Mcp-Name: return_result`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("return_result") }
