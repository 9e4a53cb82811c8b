// Command hand_off_task is the Lambda function of the hand_off_task tool (team.Service.HandOffTask), reached by `Mcp-Name: hand_off_task`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("hand_off_task") }
