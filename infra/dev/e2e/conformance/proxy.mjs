// Loopback reverse proxy that adds `Authorization: Bearer <token>` to every request and forwards
// everything else verbatim (method, path, Host, Origin, body, streaming responses), so the
// conformance suite, which sends no credentials, can test an authenticated endpoint. The one
// rewrite: a Host or an Origin naming the proxy itself becomes the target's, since to the client
// the proxy is the server (the stack serves its own host and origin only).
// Usage: node proxy.mjs <target-origin e.g. http://127.0.0.1:3000>   (token in $PRICKLE_TOKEN)
// Prints "PROXY_PORT=<port>" once listening.
import http from 'node:http';

const target = new URL(process.argv[2]);
const token = process.env.PRICKLE_TOKEN;
if (!token) { console.error('PRICKLE_TOKEN is required'); process.exit(2); }

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  // Any other Host and Origin stay as the client sent them (dns-rebinding-protection tests the server's check).
  if (headers.host === `127.0.0.1:${server.address().port}`) headers.host = target.host;
  if (headers.origin === `http://127.0.0.1:${server.address().port}`) headers.origin = target.origin;
  const up = http.request({ hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (ur) => {
    res.writeHead(ur.statusCode, ur.rawHeaders);
    ur.pipe(res);
  });
  up.on('error', (e) => { if (!res.headersSent) res.writeHead(502); res.end(String(e)); });
  req.pipe(up);
  res.on('close', () => up.destroy());
});
server.listen(0, '127.0.0.1', () => console.log(`PROXY_PORT=${server.address().port}`));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));
