// Command review_result is the Lambda function of the review_result tool (team.Service.ReviewResult), reached by `Mcp-Name: review_result`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("review_result") }
