// Command request_step is the Lambda function of the request_step tool (team.Service.RequestStep), reached by `Mcp-Name: request_step`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("request_step") }
