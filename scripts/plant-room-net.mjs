// The plant-room soak's network: the cloud in a network namespace of its own, reached by the gateway
// over a bad uplink and by the soak itself over a clean management link. Everything is named after
// the soak's pid (namespace edgeld-soak-<pid>, veths esu<pid>/esuc<pid> and esm<pid>/esmc<pid>, nft
// table edgeld_soak_<pid>, and an unreachable route to the uplink's /30 for while it is down) and
// removed by `remove()`, which is safe to call twice and after a partial
// set-up; `removeStale()` removes what a soak killed before its cleanup left behind.
//
// The uplink: a veth pair with `tbf` (the rate, both directions), an nft rule dropping a share of the
// packets at random (both directions, `numgen random`), a link that `down()`/`up()` cut and restore,
// and the delay relay (scripts/plant-room-relay.mjs) in the namespace in front of the cloud's ports.
// `tc netem` would do delay and loss in one qdisc, but the kernels we run on are built without it.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './soak-lib.mjs';

const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).toString();
const tryRun = (cmd, args) => {
  try {
    return run(cmd, args);
  } catch {
    return undefined;
  }
};

/** Why this machine cannot make the uplink (not root, no `ip`, `nft` or `taskset`), or undefined. */
export function cannotMakeUplink() {
  if (process.getuid?.() !== 0) return 'the plant-room soak makes network namespaces and veth pairs: it needs root';
  for (const [cmd, pkg] of [['ip', 'iproute2'], ['tc', 'iproute2'], ['nft', 'nftables'], ['taskset', 'util-linux']]) {
    if (tryRun('sh', ['-c', `command -v ${cmd}`]) === undefined) return `${cmd} is missing (Debian package ${pkg})`;
  }
  return undefined;
}

/** The two /30 networks of a pid, in 10.0.0.0/8: uplink and management. */
function addresses(pid) {
  const base = (pid % 2 ** 21) * 8;
  const ip = (n) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  return { upNet: `${ip(base)}/30`, gw: ip(base + 1), cloud: ip(base + 2), mgmtGw: ip(base + 5), mgmtCloud: ip(base + 6) };
}

/**
 * While the uplink is down its connected route is gone: without this route of last resort the
 * cloud's address would be sent out through the machine's default route, where it is not (or worse,
 * is reached some other way). With it, the cloud is unreachable, as from a site whose uplink is cut.
 */
const unreachable = (a) => ['route', 'add', 'unreachable', a.upNet, 'metric', '4000'];

const names = (pid) => ({ ns: `edgeld-soak-${pid}`, up: `esu${pid}`, upCloud: `esuc${pid}`, mgmt: `esm${pid}`, mgmtCloud: `esmc${pid}`, table: `edgeld_soak_${pid}` });

/** Removes the namespace, veths and nft table of a soak with this pid (whatever of them exists). */
export function removeNetwork(pid) {
  const n = names(pid);
  // What still runs in the namespace (the cloud and the relay of a soak that was killed) goes first.
  for (const p of (tryRun('ip', ['netns', 'pids', n.ns]) ?? '').split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(p), 'SIGKILL');
    } catch {
      // gone already
    }
  }
  tryRun('ip', ['netns', 'exec', n.ns, 'nft', 'delete', 'table', 'inet', n.table]);
  tryRun('ip', ['route', 'del', 'unreachable', addresses(pid).upNet, 'metric', '4000']);
  tryRun('ip', ['netns', 'del', n.ns]);
  // The peers are in the namespace: deleting it deletes the pairs; these only matter after a partial set-up.
  tryRun('ip', ['link', 'del', n.up]);
  tryRun('ip', ['link', 'del', n.mgmt]);
}

/** Removes the networks of soaks whose process is gone. */
export function removeStale() {
  const list = tryRun('ip', ['netns', 'list']) ?? '';
  for (const m of list.matchAll(/^edgeld-soak-(\d+)\b/gm)) {
    const pid = Number(m[1]);
    if (!existsSync(`/proc/${pid}`)) removeNetwork(pid);
  }
}

/**
 * Makes the namespace and both links; `delayMs` is added to every round trip (half each way),
 * `lossPercent` of the packets are dropped in each direction, `rateKbit` is the rate each way (null:
 * no limit, a clean link).
 */
export function createNetwork({ pid = process.pid, rateKbit, lossPercent }) {
  const n = names(pid);
  const a = addresses(pid);
  const ipn = (...args) => run('ip', ['-n', n.ns, ...args]);
  try {
    run('ip', ['netns', 'add', n.ns]);
    ipn('link', 'set', 'lo', 'up');
    for (const [here, there, hereIp, thereIp] of [[n.up, n.upCloud, a.gw, a.cloud], [n.mgmt, n.mgmtCloud, a.mgmtGw, a.mgmtCloud]]) {
      run('ip', ['link', 'add', here, 'type', 'veth', 'peer', 'name', there, 'netns', n.ns]);
      run('ip', ['addr', 'add', `${hereIp}/30`, 'dev', here]);
      run('ip', ['link', 'set', here, 'up']);
      ipn('addr', 'add', `${thereIp}/30`, 'dev', there);
      ipn('link', 'set', there, 'up');
    }
    run('ip', unreachable(a));
    // The rate: burst 32 kbit is what tbf needs at 1 Mbit/s on a 1500-byte MTU; the queue holds 400 ms.
    if (rateKbit !== null) {
      const tbf = ['root', 'tbf', 'rate', `${rateKbit}kbit`, 'burst', '32kbit', 'latency', '400ms'];
      run('tc', ['qdisc', 'add', 'dev', n.up, ...tbf]);
      run('ip', ['netns', 'exec', n.ns, 'tc', 'qdisc', 'add', 'dev', n.upCloud, ...tbf]);
    }
    const nft = (...args) => run('ip', ['netns', 'exec', n.ns, 'nft', ...args]);
    nft('add', 'table', 'inet', n.table);
    if (lossPercent > 0) {
      nft('add', 'chain', 'inet', n.table, 'in', '{ type filter hook input priority 0; }');
      nft('add', 'chain', 'inet', n.table, 'out', '{ type filter hook output priority 0; }');
      const threshold = String(Math.round(lossPercent * 100));
      nft('add', 'rule', 'inet', n.table, 'in', 'iifname', n.upCloud, 'numgen', 'random', 'mod', '10000', '<', threshold, 'drop');
      nft('add', 'rule', 'inet', n.table, 'out', 'oifname', n.upCloud, 'numgen', 'random', 'mod', '10000', '<', threshold, 'drop');
    }
  } catch (err) {
    removeNetwork(pid);
    throw new Error(`making the uplink: ${err.stderr?.toString().trim() || err.message}`);
  }
  return {
    ns: n.ns, ...a,
    /** Cuts the uplink (the management link stays up). */
    down: () => run('ip', ['link', 'set', n.up, 'down']),
    up: () => run('ip', ['link', 'set', n.up, 'up']),
    remove: () => removeNetwork(pid),
    /** The command prefix that runs a program in the namespace. */
    exec: ['ip', 'netns', 'exec', n.ns],
  };
}

/**
 * Starts the delay relay in the namespace: each `[listenPort, targetPort]` listens on the cloud's
 * uplink address and forwards to 127.0.0.1 of the namespace. Resolves with the process once ready.
 */
export function startRelay(net, delayMs, pairs) {
  const specs = pairs.map(([listen, target]) => `${net.cloud}:${listen}=127.0.0.1:${target}`);
  const child = spawn('ip', ['netns', 'exec', net.ns, process.execPath, join(ROOT, 'scripts/plant-room-relay.mjs'), '--delay-ms', String(delayMs / 2), ...specs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the delay relay did not start in 10 s: ${err}`)), 10_000);
    child.stdout.on('data', (c) => {
      if (c.toString().includes('relay ready')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`the delay relay exited (${code}): ${err}`)));
  });
}
