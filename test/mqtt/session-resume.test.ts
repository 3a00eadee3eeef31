// A persistent session resumed while messages flow: Aedes restores its subscriptions before it replays
// its queue, so a message queued then reaches it both live and from the queue. Each message goes out
// once on the connection, an acknowledgement of one delivery never makes the other fail (which ended
// the connection with "no such packet"), and a refused delivery takes its own message from the queue,
// never another one with the same message id. Aedes' calls are made here in the orders the race gives.

import type { Client } from 'aedes';
import { afterEach, describe, expect, it } from 'vitest';
import { SqlitePersistence } from '../../src/mqtt/persistence.js';
import type { Store } from '../../src/store/index.js';
import { memoryStore } from '../store/helpers.js';

type Packet = Parameters<SqlitePersistence['outgoingUpdate']>[1];

const BROKER = 'broker-1';
const client = { id: 'valve-1' } as Client;
let store: Store | undefined;

afterEach(() => store?.close());

async function setUp(): Promise<SqlitePersistence> {
  store = memoryStore();
  const p = new SqlitePersistence(store.mqttSessions);
  await p.setup({ id: BROKER } as Parameters<SqlitePersistence['setup']>[0]);
  return p;
}

/** A message as Aedes publishes it (its origin, no message id of this client's yet). */
const message = (counter: number, publisherMessageId?: number): Packet => ({
  cmd: 'publish', topic: 'ngsi/default/valve-1/cmd', payload: Buffer.from(`command ${counter}`), qos: 1, retain: false, dup: false,
  brokerId: BROKER, brokerCounter: counter, ...(publisherMessageId === undefined ? {} : { messageId: publisherMessageId }),
}) as unknown as Packet;

/** Aedes' copy of a message on its way to this client, with the message id it was given. */
const delivery = (m: Packet, messageId: number): Packet => ({ ...m, messageId }) as unknown as Packet;

const puback = (messageId: number): Packet => ({ cmd: 'puback', messageId }) as unknown as Packet;

async function replay(p: SqlitePersistence): Promise<Packet[]> {
  const out: Packet[] = [];
  for await (const q of p.outgoingStream(client)) out.push(q as Packet);
  return out;
}

/** The origins of what the client's queue holds, as stored. */
const queued = (): number[] => store!.mqttSessions.queuedPage(client.id, 0, Number.MAX_SAFE_INTEGER, 100).map((q) => q.brokerCounter ?? -1);

describe('a persistent session resumed while messages flow', () => {
  it('a message delivered live and acknowledged is not replayed from the queue, and nothing fails', async () => {
    const p = await setUp();
    await p.subscriptionsByClient(client);
    const m = message(1);
    await p.outgoingEnqueueCombi([{ clientId: client.id }], m);
    // Live: Aedes asks authorizeForward, then assigns a message id; the device acknowledges at once.
    expect(p.mayDeliver(client, m)).toBe(true);
    await p.outgoingUpdate(client, delivery(m, 7));
    await p.outgoingClearMessageId(client, puback(7));
    // The replay that follows finds nothing to send again.
    expect(await replay(p)).toEqual([]);
  });

  it('a message replayed first is not sent live as well; the live refusal leaves it to its delivery\'s PUBACK', async () => {
    const p = await setUp();
    await p.subscriptionsByClient(client);
    const m = message(2);
    await p.outgoingEnqueueCombi([{ clientId: client.id }], m);
    const [fromQueue] = await replay(p);
    const replayed = delivery(fromQueue!, 8);
    await p.outgoingUpdate(client, replayed);
    expect(p.mayDeliver(client, replayed)).toBe(true);
    // The same message reaches the client live: refused, and Aedes' clearing of a refused message takes nothing.
    expect(p.mayDeliver(client, m)).toBe(false);
    await p.outgoingClearMessageId(client, m);
    expect(queued()).toEqual([2]);
    // The PUBACK of the replayed delivery takes it.
    await p.outgoingClearMessageId(client, puback(8));
    expect(queued()).toEqual([]);
  });

  it('a replay that reaches a message already acknowledged skips it instead of failing', async () => {
    const p = await setUp();
    await p.subscriptionsByClient(client);
    const m = message(3);
    await p.outgoingEnqueueCombi([{ clientId: client.id }], m);
    const stream = p.outgoingStream(client);
    const [fromQueue] = await stream.toArray() as Packet[];
    // Between the replay's read and its update: delivered live and acknowledged.
    await p.outgoingUpdate(client, delivery(m, 9));
    await p.outgoingClearMessageId(client, puback(9));
    const late = delivery(fromQueue!, 10);
    await expect(p.outgoingUpdate(client, late)).resolves.toBeUndefined();
    expect(p.mayDeliver(client, late)).toBe(false);
  });

  it('once resumed, every delivery is its own: a message published again is delivered again', async () => {
    const p = await setUp();
    await p.subscriptionsByClient(client);
    p.resumed(client.id);
    const m = message(4);
    await p.outgoingEnqueueCombi([{ clientId: client.id }], m);
    expect(p.mayDeliver(client, m)).toBe(true);
    await p.outgoingUpdate(client, delivery(m, 11));
    expect(p.mayDeliver(client, delivery(m, 11))).toBe(true);
  });

  it('a refused delivery takes its own message by origin, not another one that has its publisher\'s message id', async () => {
    const p = await setUp();
    const first = message(5);
    await p.outgoingEnqueueCombi([{ clientId: client.id }], first);
    await p.outgoingUpdate(client, delivery(first, 12));
    // A message relayed from a device whose own message id is 12, refused on its way (authorizeForward).
    const relayed = message(6, 12);
    await p.outgoingEnqueueCombi([{ clientId: client.id }], relayed);
    await p.outgoingClearMessageId(client, relayed);
    expect(queued()).toEqual([5]);
    // A refused internal message (no message id at all) takes none but itself either.
    const internal = message(7);
    await p.outgoingEnqueueCombi([{ clientId: client.id }], internal);
    await p.outgoingClearMessageId(client, internal);
    expect(queued()).toEqual([5]);
  });
});
