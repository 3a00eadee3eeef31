// A cloud broker that is somewhere else: the stand-in upstream of the write-during-drain scenario. On a
// 2-core bench machine a second edgeld as the cloud takes the CPU the edge's own writes need, which a
// real cloud, on its own machine, never does. This one answers the federation's requests the way an
// NGSI-LD broker answers them when it accepts everything (batch upsert 204, temporal append 204,
// delete 204, a query an empty list), after parsing each body, and counts what it was sent.
// Started as a child process with SERVER_PORT (GET /ready, GET /count), like the broker.

import { createServer } from 'node:http';

const port = Number(process.env.SERVER_PORT ?? '0');
const host = process.env.SERVER_HOST ?? '127.0.0.1';
const BASE = '/ngsi-ld/v1';

/** Attribute instances received: every attribute of an upserted entity, every instance appended. */
let instances = 0;
let entities = 0;
let requests = 0;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const CORE = new Set(['id', 'type', 'scope', '@context']);

/** Instances under the attribute members of one entity (an array of instances counts each). */
function countAttributes(entity: Record<string, unknown>): number {
  let n = 0;
  for (const [key, value] of Object.entries(entity)) if (!CORE.has(key)) n += Array.isArray(value) ? value.length : 1;
  return n;
}

function problem(status: number, title: string): string {
  return JSON.stringify({ type: 'https://uri.etsi.org/ngsi-ld/errors/BadRequestData', title, status });
}

const server = createServer((req, res) => {
  const url = req.url ?? '';
  if (url === '/ready') {
    res.writeHead(200).end('ok');
    return;
  }
  if (url === '/count') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ instances, entities, requests }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    requests += 1;
    let body: unknown;
    try {
      body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(problem(400, 'Invalid JSON'));
      return;
    }
    const path = url.split('?')[0] ?? '';
    if (req.method === 'POST' && path === `${BASE}/entityOperations/upsert` && Array.isArray(body) && body.every(isObject)) {
      entities += body.length;
      for (const e of body) instances += countAttributes(e);
      res.writeHead(204).end();
    } else if (req.method === 'POST' && path.startsWith(`${BASE}/temporal/entities/`) && path.endsWith('/attrs') && isObject(body)) {
      instances += countAttributes(body);
      res.writeHead(204).end();
    } else if (req.method === 'GET' && path === `${BASE}/entities`) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
    } else if (req.method === 'DELETE' && path.startsWith(`${BASE}/`)) {
      res.writeHead(204).end();
    } else {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(problem(400, `Not expected: ${req.method ?? ''} ${path}`));
    }
  });
});
server.listen(port, host);

function shutdown(): void {
  server.closeAllConnections();
  server.close(() => process.exit(0));
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
