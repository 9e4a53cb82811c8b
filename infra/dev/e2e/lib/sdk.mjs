// The official TypeScript SDK client, connected with an agent's bearer token.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export async function connectSdk(url, token, name = 'prickle-e2e-ts') {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name, version: '0.0.0' });
  await client.connect(transport);
  return { client, transport, protocolVersion: transport.protocolVersion };
}
