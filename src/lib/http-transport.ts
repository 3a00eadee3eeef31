// An HTTP transport on node:http(s) keep-alive connections (the federation drain's upstream, the
// context sources of distributed operations). The global fetch (undici) costs several times the CPU
// per request of node:http, and a gateway forwarding its measurements pays that on every batch.

import { request as httpRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';

export interface TransportRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  signal: AbortSignal;
  /** Largest reply body read; a larger one answers `bytes: undefined` (the connection is dropped). */
  maxBytes: number;
}

export interface TransportReply {
  status: number;
  bytes: Buffer | undefined;
  /** The reply's Content-Type, Link and ETag headers, when given. */
  contentType?: string | undefined;
  link?: string | undefined;
  etag?: string | undefined;
  /** The reply's NGSILD-Warning header (NGSI-LD §6.3.17), when given. */
  warning?: string | undefined;
}

export type Transport = (url: string, req: TransportRequest) => Promise<TransportReply>;

/** A transport with its own connection pools (by default a few sockets per host: batches go one at a time). */
export function createHttpTransport(maxSockets = 4): Transport {
  const agents = { http: new HttpAgent({ keepAlive: true, maxSockets }), https: new HttpsAgent({ keepAlive: true, maxSockets }) };
  return (url, req) => new Promise<TransportReply>((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch (err) {
      reject(err);
      return;
    }
    const secure = target.protocol === 'https:';
    if (!secure && target.protocol !== 'http:') {
      reject(new Error(`not an http(s) URL: ${target.protocol}`));
      return;
    }
    const headers = { ...req.headers, ...(req.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(req.body)) }) };
    const options = {
      method: req.method, hostname: target.hostname.replace(/^\[|\]$/g, ''), port: target.port === '' ? undefined : Number(target.port),
      path: `${target.pathname}${target.search}`, headers, signal: req.signal, agent: secure ? agents.https : agents.http,
    };
    const onReply = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > req.maxBytes) {
          // NOTE: answered first: destroying the reply emits its 'aborted' at once.
          resolve({ status: res.statusCode ?? 0, bytes: undefined });
          res.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, bytes: Buffer.concat(chunks), contentType: res.headers['content-type'], link: [res.headers.link ?? []].flat().join(', ') || undefined,
        etag: res.headers.etag, warning: [res.headers['ngsild-warning'] ?? []].flat().join(', ') || undefined,
      }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('reply broken off')));
    };
    try {
      // NOTE: throws at once for a header value with a forbidden character (a header injection).
      const sent = (secure ? httpsRequest : httpRequest)(options, onReply);
      sent.on('error', reject);
      sent.end(req.body);
    } catch (err) {
      reject(err);
    }
  });
}
