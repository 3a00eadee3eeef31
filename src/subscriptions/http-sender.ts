// Delivery of a notification over HTTP (NGSI-LD §5.11, behaviour §7): a POST with its headers,
// bounded by the endpoint's timeout; any 2xx is a success. Connections are kept alive and reused.

import type { JsonObject } from '../ngsi/index.js';

export interface HttpDelivery {
  uri: string;
  headers: Record<string, string>;
  body: JsonObject;
}

/** Sends one notification; rejects with a short reason (status, timeout, connection error). */
export async function sendHttp(delivery: HttpDelivery, timeoutMs: number): Promise<void> {
  let res: Response;
  try {
    res = await fetch(delivery.uri, {
      method: 'POST', headers: delivery.headers, body: JSON.stringify(delivery.body), signal: AbortSignal.timeout(timeoutMs), redirect: 'manual',
    });
  } catch (err) {
    const name = err instanceof Error ? err.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') throw new Error(`no answer within ${timeoutMs} ms`, { cause: err });
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw new Error(`cannot reach the endpoint: ${cause}`, { cause: err });
  }
  // The body is read (and dropped) so the connection goes back to the pool.
  await res.arrayBuffer().catch(() => undefined);
  if (res.status < 200 || res.status > 299) throw new Error(`the endpoint answered ${res.status}`);
}
