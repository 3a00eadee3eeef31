// Delivery of a notification over HTTP (NGSI-LD §5.11, behaviour §7): a POST with its headers,
// bounded by the endpoint's timeout; any 2xx is a success. Connections are kept alive and reused
// (node's http client on keep-alive agents: far cheaper per request than fetch).

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpDelivery {
  uri: string;
  headers: Record<string, string>;
  /** JSON text. */
  body: string;
}

/** Connections per receiver; notifications of one subscription go one at a time anyway. */
const MAX_SOCKETS = 8;
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: MAX_SOCKETS, noDelay: true });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: MAX_SOCKETS, noDelay: true });

/** Sends one notification; rejects with a short reason (status, timeout, connection error). */
export function sendHttp(delivery: HttpDelivery, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(delivery.uri);
    } catch (err) {
      reject(new Error(`not a URL: ${delivery.uri}`, { cause: err }));
      return;
    }
    const { body } = delivery;
    const secure = url.protocol === 'https:';
    // NOTE: plain options rather than the URL (node would convert it on every request), and the body
    // as text: node then writes the head and the body together, without copying the body first.
    const options = {
      method: 'POST', agent: secure ? httpsAgent : httpAgent,
      protocol: url.protocol, hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      path: url.pathname + url.search, headers: { ...delivery.headers, 'Content-Length': String(Buffer.byteLength(body)) },
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      ...(url.username === '' && url.password === '' ? {} : { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }),
    };
    let settled = false;
    const done = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const onResponse = (res: IncomingMessage): void => {
      const status = res.statusCode ?? 0;
      // The body is read (and dropped) so the connection goes back to the pool.
      res.resume();
      res.on('end', () => done(status >= 200 && status <= 299 ? undefined : new Error(`the endpoint answered ${status}`)));
      res.on('error', (err) => done(new Error(`the answer broke off: ${err.message}`, { cause: err })));
    };
    const req = secure ? httpsRequest(options, onResponse) : httpRequest(options, onResponse);
    const timer = setTimeout(() => {
      done(new Error(`no answer within ${timeoutMs} ms`));
      req.destroy();
    }, timeoutMs);
    req.on('error', (err) => done(new Error(`cannot reach the endpoint: ${err.message}`, { cause: err })));
    req.end(body);
  });
}
