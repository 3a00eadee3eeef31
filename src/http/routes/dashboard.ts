// The read-only LAN dashboard: serves the page scripts/build-ui.mjs builds into dist/ui (index.html
// and content-hashed assets) at /ui/, with GET / redirecting there. Nothing is read at start-up: the
// directory is listed on the first request, and each asset is read from disk when it is asked for.

import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResourceNotFoundError } from '../../ngsi/index.js';
import { resource, type App, type AppContext, type DashboardOptions } from '../app-env.js';
import { readParams } from '../params.js';

/** dist/ui of the package, whether this file runs from dist/http/routes or src/http/routes. */
const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../../dist/ui/', import.meta.url));

interface Asset { file: string; type: string; gzip: boolean }
interface Built { index: { body: Buffer; gzip: Buffer | undefined; etag: string }; assets: ReadonlyMap<string, Asset> }

const IMMUTABLE = 'public, max-age=31536000, immutable';
/**
 * The page loads only its own files and talks only to this server (the API, and MQTT over
 * WebSocket). The MQTT client keeps its keep-alive timer in a worker made from a blob, which
 * background tabs do not throttle; uPlot sets inline styles.
 */
const CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; worker-src blob:; "
  + "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8', '.json': 'application/json',
};
/** Asset names the build writes: a name, a content hash, an extension. Nothing else is ever served. */
const ASSET_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.[a-z0-9]+$/;

const typeOf = (name: string): string => TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';

/** Whether the client takes gzip (RFC 9110 §12.5.3: a q of 0 refuses it; `*` stands for codings not named). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2)) || 0;
    if (coding === 'gzip' || coding === 'x-gzip') gzip = weight;
    else if (coding === '*') any = weight;
  }
  return (gzip ?? any ?? 0) > 0;
}

async function readOptional(path: string): Promise<Buffer | undefined> {
  return readFile(path).catch(() => undefined);
}

/**
 * Lists the built page once; a failure (not built) is not kept, so a later build is found. NOTE: a
 * page rebuilt while the broker runs is served after a restart (its index names the new hashes).
 */
async function loadBuilt(dir: string): Promise<Built> {
  const body = await readFile(join(dir, 'index.html'));
  const names = await readdir(join(dir, 'assets'));
  const present = new Set(names);
  const assets = new Map<string, Asset>();
  for (const name of names) {
    if (name.endsWith('.gz') || !ASSET_NAME.test(name)) continue;
    assets.set(name, { file: join(dir, 'assets', name), type: typeOf(name), gzip: present.has(`${name}.gz`) });
  }
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { index: { body, gzip: await readOptional(join(dir, 'index.html.gz')), etag }, assets };
}

function notBuilt(): never {
  throw new ResourceNotFoundError('The dashboard is not built', 'Run npm run build: it bundles the page into dist/ui');
}

export function registerDashboardRoutes(app: App, opts: DashboardOptions): void {
  const dir = opts.assetDir ?? DEFAULT_DASHBOARD_DIR;
  let built: Promise<Built> | undefined;
  const page = (): Promise<Built> => {
    built ??= loadBuilt(dir).catch((err: unknown) => {
      built = undefined;
      throw err;
    });
    return built.catch(() => notBuilt());
  };

  const sendIndex = async (c: AppContext): Promise<Response> => {
    const { index } = await page();
    const headers: Record<string, string> = {
      'Cache-Control': 'no-cache', ETag: index.etag, Vary: 'Accept-Encoding', 'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer',
    };
    if (c.req.header('if-none-match') === index.etag) return new Response(null, { status: 304, headers });
    const gzip = index.gzip !== undefined && acceptsGzip(c.req.header('accept-encoding'));
    if (gzip) headers['Content-Encoding'] = 'gzip';
    return new Response(gzip ? index.gzip : index.body, { headers: { ...headers, 'Content-Type': 'text/html; charset=utf-8' } });
  };

  resource(app, '/', {
    GET: (c) => c.redirect('/ui/', 302),
  });
  resource(app, '/ui', {
    // NOTE: the page links its assets relative to /ui/; without the slash they would resolve under /.
    // c.req.path has no trailing slash (the app is not strict), the URL has.
    GET: (c) => (new URL(c.req.url).pathname.endsWith('/') ? sendIndex(c) : c.redirect('/ui/', 302)),
  });
  // What the page cannot learn from the API: where its notifications arrive.
  resource(app, '/ui/config.json', {
    GET: (c) => {
      readParams(c.req.url, []);
      const port = opts.mqttPort();
      const mqtt = port === undefined ? null : { websocketPath: opts.websocketPath, notificationUri: `mqtt://127.0.0.1:${port}` };
      return c.json({ mqtt }, 200, { 'Cache-Control': 'no-store' });
    },
  });
  resource(app, '/ui/assets/:file', {
    GET: async (c) => {
      const name = c.req.param('file') ?? '';
      const asset = (await page()).assets.get(name);
      if (asset === undefined) throw new ResourceNotFoundError('No such dashboard asset', name);
      const gzip = asset.gzip && acceptsGzip(c.req.header('accept-encoding'));
      const body = await readOptional(gzip ? `${asset.file}.gz` : asset.file);
      if (body === undefined) throw new ResourceNotFoundError('No such dashboard asset', name);
      const headers: Record<string, string> = {
        'Content-Type': asset.type, 'Cache-Control': IMMUTABLE, Vary: 'Accept-Encoding', 'X-Content-Type-Options': 'nosniff',
      };
      if (gzip) headers['Content-Encoding'] = 'gzip';
      return new Response(body, { headers });
    },
  });
}
