#!/usr/bin/env node
// Makes the certificates of HTTPS and MQTT over TLS on a LAN without a public CA: a local CA (key and
// certificate, 10 years), made once in the directory and kept, and a gateway certificate signed by it
// for the given host names and addresses. Clients trust ca.pem (curl --cacert, mosquitto_pub --cafile).
// Run again to renew the gateway certificate: the CA stays, and a running broker reloads the new pair.
//
// Usage: node scripts/make-certs.mjs [--dir DIR] [--days N] [--owner USER] [host-or-address ...]
//   default hosts: this machine's host name, localhost, 127.0.0.1

import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const USAGE = `usage: node scripts/make-certs.mjs [--dir DIR] [--days N] [--owner USER] [host-or-address ...]
  --dir DIR    where ca.pem, ca-key.pem, gateway.pem and gateway-key.pem go (default: certs)
  --days N     validity of the gateway certificate in days (default 825); the CA's is 10 years
  --owner USER the account the broker runs as, given the gateway key (run as root; the CA key stays root's)
  hosts        DNS names and IP addresses the gateway is reached at (default: ${hostname()}, localhost, 127.0.0.1)`;

const CA_DAYS = 3650;

/** The file names in the directory. */
export const FILES = { caCert: 'ca.pem', caKey: 'ca-key.pem', cert: 'gateway.pem', key: 'gateway-key.pem' };

function openssl(args, input) {
  return execFileSync('openssl', args, { input, stdio: ['pipe', 'pipe', 'pipe'] }).toString('utf8');
}

/** A new P-256 private key (PKCS#8 PEM), written readable by its owner only from the start. */
function writePrivateKey(path) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  writeFileSync(path, privateKey, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** `DNS:a,IP:b` for subjectAltName. */
export function subjectAltName(hosts) {
  return hosts.map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
}

function makeCa(dir) {
  const key = join(dir, FILES.caKey);
  const cert = join(dir, FILES.caCert);
  writePrivateKey(key);
  openssl([
    'req', '-x509', '-new', '-key', key, '-sha256', '-days', String(CA_DAYS), '-subj', `/CN=edgeld local CA ${hostname()}`,
    '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-out', cert,
  ]);
}

/** The uid and gid of an account, by name. */
function accountOf(user) {
  const id = (flag) => Number(execFileSync('id', [flag, user], { stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8').trim());
  return { uid: id('-u'), gid: id('-g') };
}

function makeGateway(dir, hosts, days, owner) {
  const tmpKey = join(dir, `${FILES.key}.new`);
  const tmpCert = join(dir, `${FILES.cert}.new`);
  const ext = join(dir, 'gateway.ext.new');
  try {
    writePrivateKey(tmpKey);
    if (owner !== undefined) chownSync(tmpKey, owner.uid, owner.gid);
    const csr = openssl(['req', '-new', '-key', tmpKey, '-subj', `/CN=${hosts[0]}`]);
    writeFileSync(ext, [
      'basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth',
      `subjectAltName=${subjectAltName(hosts)}`, '',
    ].join('\n'));
    openssl([
      'x509', '-req', '-sha256', '-days', String(days), '-CA', join(dir, FILES.caCert), '-CAkey', join(dir, FILES.caKey),
      '-set_serial', `0x${randomBytes(16).toString('hex').replace(/^[89a-f]/, '1')}`, '-extfile', ext, '-out', tmpCert,
    ], csr);
    // NOTE: each file is renamed over the old one, so a broker watching the directory never reads half a file.
    renameSync(tmpKey, join(dir, FILES.key));
    renameSync(tmpCert, join(dir, FILES.cert));
  } finally {
    for (const f of [tmpKey, tmpCert, ext]) rmSync(f, { force: true });
  }
}

/** Makes the CA when the directory has none, then a new gateway certificate; returns the paths and whether the CA is new. */
export function makeCerts({ dir, hosts, days = 825, owner }) {
  // NOTE: 0755: the broker's account must reach its files (and watch the directory); each key is 0600.
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const hasCa = existsSync(join(dir, FILES.caCert)) && existsSync(join(dir, FILES.caKey));
  if (!hasCa) makeCa(dir);
  makeGateway(dir, hosts, days, owner === undefined ? undefined : accountOf(owner));
  return { isNewCa: !hasCa, ...Object.fromEntries(Object.entries(FILES).map(([k, f]) => [k, join(dir, f)])) };
}

function main() {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args: process.argv.slice(2), allowPositionals: true,
      options: {
        dir: { type: 'string', default: 'certs' }, days: { type: 'string', default: '825' }, owner: { type: 'string' }, help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const days = Number(values.days);
  const bad = positionals.find((h) => !isIP(h) && !/^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(h));
  if (!Number.isInteger(days) || days < 1 || bad !== undefined) {
    process.stderr.write(`${bad === undefined ? '--days: expected a positive integer' : `not a host name or IP address: ${bad}`}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const hosts = positionals.length > 0 ? positionals : [...new Set([hostname(), 'localhost', '127.0.0.1'])];
  const dir = resolve(values.dir);
  let made;
  try {
    made = makeCerts({ dir, hosts, days, owner: values.owner });
  } catch (err) {
    if (values.owner !== undefined && err?.code === 'EPERM') throw new Error(`--owner ${values.owner}: giving the key to another account needs root`, { cause: err });
    throw err;
  }
  process.stdout.write([
    made.isNewCa ? `made a local CA: ${made.caCert} (keep ${made.caKey} safe, or delete it once every gateway certificate is made)` : `kept the CA in ${made.caCert}`,
    `made the gateway certificate for ${hosts.join(', ')}, valid ${days} days: ${made.cert} (key ${made.key}, mode 0600${values.owner === undefined ? '' : `, owned by ${values.owner}`})`,
    'configure edgeld with:',
    `  SERVER_TLS_KEY=${made.key}`, `  SERVER_TLS_CERT=${made.cert}`,
    `  MQTT_TLS_KEY=${made.key}`, `  MQTT_TLS_CERT=${made.cert}`, '  MQTT_TLS_PORT=8883',
    `clients trust ${made.caCert}: curl --cacert ${made.caCert} https://${hosts[0]}:1026/ngsi-ld/v1/types`, '',
  ].join('\n'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`make-certs: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
