// Raw HTTP client for the MCP endpoint: both protocol eras, exact headers, raw bodies.
export const MODERN = '2026-07-28';
export const HANDSHAKE = '2025-11-25';

let nextId = 1;
export const newId = () => nextId++;

/** POST a body (object → JSON, string/Buffer as is) and return {status, headers, text, json}. */
export async function post(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(30000),
  });
  const text = await res.text();
  let json;
  const ct = res.headers.get('content-type') || '';
  if (ct.includes('text/event-stream')) {
    const events = text.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => { try { return JSON.parse(l.slice(5).trim()); } catch { return undefined; } }).filter(Boolean);
    json = events.find((e) => 'result' in e || 'error' in e) ?? events.at(-1);
  } else if (text) {
    try { json = JSON.parse(text); } catch { json = undefined; }
  }
  return { status: res.status, headers: res.headers, text, json };
}

export const bearer = (token) => (token ? { Authorization: `Bearer ${token}` } : {});

export function modernMeta(extra = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'prickle-e2e-raw', version: '0.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  };
}

export function mcpNameFor(method, params) {
  if (method === 'tools/call' || method === 'prompts/get') return params?.name;
  if (method === 'resources/read') return params?.uri;
  return undefined;
}

/** A 2026-07-28 request: `_meta` in params, MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. */
export function modernRequest(method, params = {}, { id = newId(), headers = {}, omit = [] } = {}) {
  const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(params._meta) } };
  const h = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
  const name = mcpNameFor(method, params);
  if (name !== undefined) h['Mcp-Name'] = name;
  for (const k of omit) delete h[k];
  return { body, headers: { ...h, ...headers } };
}

export async function modernCall(url, token, method, params, opts = {}) {
  const { body, headers } = modernRequest(method, params, opts);
  return post(url, body, { ...bearer(token), ...headers });
}

export async function modernTool(url, token, name, args, opts = {}) {
  return modernCall(url, token, 'tools/call', { name, arguments: args }, opts);
}

/** Handshake-era session (stateless on the server): initialize, initialized, then calls. */
export async function legacySession(url, token, version = HANDSHAKE) {
  const init = await post(url, {
    jsonrpc: '2.0', id: newId(), method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'prickle-e2e-raw', version: '0.0.0' } },
  }, bearer(token));
  if (init.status !== 200 || !init.json?.result) throw new Error(`initialize ${version}: HTTP ${init.status} ${init.text.slice(0, 500)}`);
  const sessionId = init.headers.get('mcp-session-id');
  const negotiated = init.json.result.protocolVersion;
  const headers = { ...bearer(token), 'MCP-Protocol-Version': negotiated, ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}) };
  const note = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return {
    init, negotiated, sessionId, initializedStatus: note.status,
    call: (method, params) => post(url, { jsonrpc: '2.0', id: newId(), method, params }, headers),
    tool: (name, args) => post(url, { jsonrpc: '2.0', id: newId(), method: 'tools/call', params: { name, arguments: args } }, headers),
  };
}
