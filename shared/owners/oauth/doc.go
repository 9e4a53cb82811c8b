// Package oauth is Prickle's OAuth 2.1 authorization server for web and
// desktop MCP clients (claude.ai, ChatGPT, Claude Desktop): RFC 8414
// metadata, dynamic client registration (RFC 7591) and client ID metadata
// documents, the authorization code grant with PKCE (S256 only), rotated
// refresh tokens, and the owner's consent, which picks the agent a client
// acts as. The grant logic is github.com/ory/fosite's; this package gives
// it storage (through the Grants port, which the DynamoDB store
// implements), opaque hashed tokens, and the pages.
package oauth
