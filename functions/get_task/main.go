// Command get_task is the Lambda function of the get_task tool, reached by `Mcp-Name: get_task`.
package main

import "github.com/useprickle/prickle/shared/lambdahttp"

func main() { lambdahttp.StartMCP("get_task") }
