// Command hand_off_task is the Lambda function of the hand_off_task tool, reached by `Mcp-Name: hand_off_task`.
package main

import "github.com/useprickle/prickle/shared/lambdahttp"

func main() { lambdahttp.StartMCP("hand_off_task") }
