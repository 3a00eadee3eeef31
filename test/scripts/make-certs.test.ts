// scripts/make-certs.mjs: makes a local CA once in a directory and a gateway certificate it signs for
// the given names and addresses (defaults: the host name, localhost, 127.0.0.1), private keys 0600
// (the gateway's given to --owner); run again, it keeps the CA and renews the gateway certificate.

import { spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { runMakeCerts } from '../helpers/certs.js';
import { tempDir } from '../helpers/broker.js';

const dir = tempDir('edgeld-make-certs-');
afterAll(() => dir.remove());

const modeOf = (path: string): string => `0${(statSync(path).mode & 0o777).toString(8)}`;
const x509 = (path: string): X509Certificate => new X509Certificate(readFileSync(path));
const YEAR_MS = 365 * 24 * 3_600_000;

describe('scripts/make-certs.mjs', () => {
  it('makes a 10-year CA and a gateway certificate it signs for the host name, localhost and 127.0.0.1, keys 0600', () => {
    const out = `${dir.path}/defaults`;
    const res = runMakeCerts(['--dir', out]);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain(`SERVER_TLS_KEY=${out}/gateway-key.pem`);
    expect(modeOf(`${out}/ca-key.pem`)).toBe('0600');
    expect(modeOf(`${out}/gateway-key.pem`)).toBe('0600');
    const ca = x509(`${out}/ca.pem`);
    const cert = x509(`${out}/gateway.pem`);
    expect(ca.ca).toBe(true);
    expect(Date.parse(ca.validTo) - Date.now()).toBeGreaterThan(9.9 * YEAR_MS);
    expect(cert.ca).toBe(false);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.subjectAltName).toBe([...new Set([hostname(), 'localhost'])].map((h) => `DNS:${h}`).concat('IP Address:127.0.0.1').join(', '));
    expect(cert.checkPrivateKey(createPrivateKey(readFileSync(`${out}/gateway-key.pem`)))).toBe(true);
    // openssl agrees the chain is good.
    const verify = spawnSync('openssl', ['verify', '-CAfile', `${out}/ca.pem`, `${out}/gateway.pem`], { encoding: 'utf8' });
    expect(verify.stdout.trim()).toBe(`${out}/gateway.pem: OK`);
  });

  it('keeps the CA on a second run and signs a new gateway certificate for the names given', () => {
    const out = `${dir.path}/again`;
    expect(runMakeCerts(['--dir', out]).status).toBe(0);
    const ca = readFileSync(`${out}/ca.pem`);
    const first = x509(`${out}/gateway.pem`).fingerprint256;
    const res = runMakeCerts(['--dir', out, '--days', '30', '--owner', userInfo().username, 'gateway.local', '192.168.1.20', '::1']);
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain('kept the CA');
    expect(readFileSync(`${out}/ca.pem`).equals(ca)).toBe(true);
    const cert = x509(`${out}/gateway.pem`);
    expect(cert.fingerprint256).not.toBe(first);
    expect(cert.subjectAltName).toBe('DNS:gateway.local, IP Address:192.168.1.20, IP Address:0:0:0:0:0:0:0:1');
    expect(cert.checkIssued(new X509Certificate(ca))).toBe(true);
    expect(Date.parse(cert.validTo) - Date.now()).toBeLessThan(31 * 24 * 3_600_000);
    // --owner: the gateway key belongs to that account, still 0600; the directory lets it reach its files.
    expect(statSync(`${out}/gateway-key.pem`).uid).toBe(userInfo().uid);
    expect(modeOf(`${out}/gateway-key.pem`)).toBe('0600');
    expect(modeOf(out)).toBe('0755');
  });

  it('refuses what is no host name or address, and a bad --days, with exit code 2', () => {
    expect(runMakeCerts(['--dir', `${dir.path}/bad`, 'not a host']).status).toBe(2);
    expect(runMakeCerts(['--dir', `${dir.path}/bad`, '--days', '0']).status).toBe(2);
  });
});
