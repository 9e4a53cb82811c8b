// Command save_checkpoint is the Lambda function of the save_checkpoint tool (team.Service.SaveCheckpoint), reached by `Mcp-Name: save_checkpoint`.
package main

import "github.com/useprickle/prickle/shared/mcp/lambdamcp"

func main() { lambdamcp.StartMCP("save_checkpoint") }
