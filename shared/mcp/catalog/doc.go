// Package catalog is Prickle's MCP tool catalog: the eleven tools with their
// descriptions, annotations and JSON schemas (three of them the published
// seed pages, byte for byte), and the glue from an MCP tool call to the team
// service. The same catalog feeds tools/list, argument validation and the
// tool reference page.
package catalog
