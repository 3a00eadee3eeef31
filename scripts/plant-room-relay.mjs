#!/usr/bin/env node
// The delay of the plant-room soak's bad uplink: a TCP relay that holds every chunk it carries for
// `--delay-ms` in each direction before passing it on, in order. It stands in for `tc netem delay`,
// which the kernels of our test machines are built without (CONFIG_NET_SCH_NETEM). It runs in the
// cloud's network namespace, in front of the cloud's HTTP and MQTT ports, so everything the gateway
// sends to the cloud crosses the veth (rate limit, loss, outages) and then this delay.
//
// What it does not model: it delays chunks as the socket reads them, not packets (a chunk read after
// a retransmission is delayed again, a burst read as one chunk is delayed once); it has no jitter and
// no reordering; its buffers (bounded, the reading side pauses beyond 1 MiB) add to the kernel's.
//
// Usage: node scripts/plant-room-relay.mjs --delay-ms <ms> <listen host:port>=<target host:port> ...
// Prints "relay ready" once every listener is up; ends on SIGTERM.

import { appendFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

// PLANT_ROOM_RELAY_TRACE=<file>: the first line of every chunk that starts an HTTP request or reply.
const TRACE = process.env.PLANT_ROOM_RELAY_TRACE;
let connections = 0;

const HIGH_WATER = 1 << 20;

function relayPair(from, to, delayMs, label) {
  const queue = [];
  let queued = 0;
  let timer;
  let ended = false;
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0].at <= now) {
      const { chunk } = queue.shift();
      queued -= chunk.length;
      if (!to.destroyed) to.write(chunk);
    }
    if (queued < HIGH_WATER && from.isPaused()) from.resume();
    if (queue.length > 0) timer = setTimeout(flush, Math.max(0, queue[0].at - performance.now()));
    else if (ended && !to.destroyed) to.end();
  };
  from.on('data', (chunk) => {
    if (TRACE !== undefined && /^(GET|POST|PATCH|PUT|DELETE|HTTP\/1\.1) /.test(chunk.toString('latin1', 0, 12))) {
      const head = chunk.toString('latin1', 0, 600);
      // A reply other than 2xx is traced whole (its first 600 bytes), with its headers.
      appendFileSync(TRACE, `${new Date().toISOString()} ${label} ${/^HTTP\/1\.1 [^2]/.test(head) ? JSON.stringify(head) : head.split('\r\n')[0]}\n`);
    }
    queue.push({ chunk, at: performance.now() + delayMs });
    queued += chunk.length;
    if (queued >= HIGH_WATER) from.pause();
    if (timer === undefined) timer = setTimeout(flush, Math.max(0, queue[0].at - performance.now()));
  });
  from.on('end', () => {
    ended = true;
    if (queue.length === 0 && !to.destroyed) to.end();
  });
  from.on('close', () => {
    // A reset or an error on one side (no FIN) resets the other once what it sent has been passed on.
    if (!ended) setTimeout(() => to.destroy(), delayMs);
  });
}

function listen(spec, delayMs) {
  const [listenAt, targetAt] = spec.split('=');
  const [lhost, lport] = listenAt.split(/:(?=\d+$)/);
  const [thost, tport] = targetAt.split(/:(?=\d+$)/);
  const server = createServer({ noDelay: true }, (client) => {
    const upstream = createConnection({ host: thost, port: Number(tport), noDelay: true });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    const id = ++connections;
    relayPair(client, upstream, delayMs, `${id} >`);
    relayPair(upstream, client, delayMs, `${id} <`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(lport), lhost, () => resolve(server));
  });
}

const args = process.argv.slice(2);
let delayMs = 150;
const specs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--delay-ms') delayMs = Number(args[++i]);
  else specs.push(args[i]);
}
const servers = await Promise.all(specs.map((s) => listen(s, delayMs)));
process.on('SIGTERM', () => {
  for (const s of servers) s.close();
  process.exit(0);
});
process.stdout.write('relay ready\n');
