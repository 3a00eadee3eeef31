// TLS test tools: certificates made by scripts/make-certs.mjs into a temp directory (a local CA and a
// gateway certificate for localhost and 127.0.0.1), the fingerprint a new TLS connection is shown,
// and HTTPS requests over a given agent (keep-alive connections stay open between requests).

import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request, type Agent } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { within } from './process.js';

const MAKE_CERTS = fileURLToPath(new URL('../../scripts/make-certs.mjs', import.meta.url));

export interface TestCerts {
  /** The CA's certificate, which clients trust. */
  ca: Buffer;
  caPath: string;
  key: string;
  cert: string;
  /** SHA-256 fingerprint of the gateway certificate in the files now, as getPeerCertificate() gives it. */
  fingerprint(): string;
  /** Makes a new gateway key and certificate under the same CA (the files are renamed over the old ones). */
  renew(): void;
  /** Replaces the certificate file (by a rename, as a renewal does) with text that is no certificate. */
  breakCert(): void;
}

export function runMakeCerts(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [MAKE_CERTS, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

export function makeTestCerts(dir: string): TestCerts {
  const make = (): void => {
    const res = runMakeCerts(['--dir', dir, 'localhost', '127.0.0.1']);
    if (res.status !== 0) throw new Error(`make-certs failed: ${res.stderr}`);
  };
  make();
  const cert = `${dir}/gateway.pem`;
  return {
    ca: readFileSync(`${dir}/ca.pem`),
    caPath: `${dir}/ca.pem`,
    key: `${dir}/gateway-key.pem`,
    cert,
    fingerprint: () => new X509Certificate(readFileSync(cert)).fingerprint256,
    renew: make,
    breakCert: () => {
      writeFileSync(`${cert}.broken`, '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n');
      renameSync(`${cert}.broken`, cert);
    },
  };
}

/** Opens a TLS connection trusting `ca` and resolves with it once the handshake is done. */
export function connectTls(port: number, ca: Buffer, opts: { minVersion?: 'TLSv1' | 'TLSv1.2'; maxVersion?: 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'; ciphers?: string } = {}): Promise<TLSSocket> {
  return within(new Promise<TLSSocket>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost', ...opts }, () => resolve(socket));
    socket.once('error', reject);
  }), 5_000, `TLS handshake with port ${port}`);
}

/** The fingerprint of the certificate a new TLS connection to `port` is shown. */
export async function peerFingerprint(port: number, ca: Buffer): Promise<string> {
  const socket = await connectTls(port, ca);
  const fingerprint = socket.getPeerCertificate().fingerprint256;
  socket.destroy();
  return fingerprint;
}

export interface HttpsReply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  /** Whether the request went over a connection an earlier request opened. */
  reusedSocket: boolean;
  /** The fingerprint of the certificate of the connection it went over. */
  fingerprint: string;
}

/** GET (or another method) over HTTPS through `agent` to 127.0.0.1 (server name localhost). */
export function httpsRequest(agent: Agent, port: number, path: string, init: { method?: string; body?: string } = {}): Promise<HttpsReply> {
  return within(new Promise<HttpsReply>((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port, path, agent, servername: 'localhost', method: init.method ?? 'GET',
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
    }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256; // NOTE: an https request runs on a TLS socket
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers, reusedSocket: req.reusedSocket,
        fingerprint,
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  }), 5_000, `https ${path}`);
}
