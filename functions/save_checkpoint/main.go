// Command save_checkpoint is the Lambda function of the save_checkpoint tool, reached by `Mcp-Name: save_checkpoint`.
package main

import "github.com/useprickle/prickle/shared/lambdahttp"

func main() { lambdahttp.StartMCP("save_checkpoint") }
