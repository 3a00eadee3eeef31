// The TLS key and certificate files: a pair loads only when the key matches the certificate, a file
// that cannot be read names its option, and a certificate replaced the way certbot does it (a new file
// in archive/, the symlink in live/ renamed over the old one) is reloaded into its listener.

import { readFileSync, renameSync, symlinkSync, mkdirSync, copyFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTlsPair, silentLogger, watchTlsFiles, type TlsPair } from '../../src/lib/index.js';
import { waitUntil } from '../auth/support.js';
import { makeTestCerts } from '../helpers/certs.js';
import { tempDir } from '../helpers/broker.js';

const dir = tempDir('edgeld-tls-files-');
afterAll(() => dir.remove());

const files = (keyFile: string, certFile: string) => ({ keyFile, certFile, keyOption: 'server.tls-key', certOption: 'server.tls-cert' });

describe('loadTlsPair', () => {
  it('loads a key and its certificate, and refuses a key of another certificate, naming the options', () => {
    const a = makeTestCerts(`${dir.path}/a`);
    const pair = loadTlsPair(files(a.key, a.cert));
    expect(pair.cert.equals(readFileSync(a.cert))).toBe(true);
    copyFileSync(a.key, `${dir.path}/old-key.pem`);
    a.renew();
    expect(() => loadTlsPair(files(`${dir.path}/old-key.pem`, a.cert)))
      .toThrow(/^server\.tls-key, server\.tls-cert: .* do not load as a key and its certificate: .*key values mismatch/);
    expect(() => loadTlsPair(files(`${dir.path}/none.pem`, a.cert))).toThrow(/^server\.tls-key: cannot read .*none\.pem/);
  });
});

describe('watchTlsFiles', () => {
  it('reloads a certificate whose symlink is renamed over the old one (certbot), once per change', async () => {
    const certs = makeTestCerts(`${dir.path}/b`);
    mkdirSync(`${dir.path}/archive`);
    mkdirSync(`${dir.path}/live`);
    const publish = (n: number): void => {
      copyFileSync(certs.key, `${dir.path}/archive/privkey${n}.pem`);
      copyFileSync(certs.cert, `${dir.path}/archive/fullchain${n}.pem`);
      for (const [link, target] of [['privkey', `privkey${n}`], ['fullchain', `fullchain${n}`]]) {
        symlinkSync(`../archive/${target}.pem`, `${dir.path}/live/${link}.pem.new`);
        renameSync(`${dir.path}/live/${link}.pem.new`, `${dir.path}/live/${link}.pem`);
      }
    };
    publish(1);
    const liveFiles = files(`${dir.path}/live/privkey.pem`, `${dir.path}/live/fullchain.pem`);
    const applied: TlsPair[] = [];
    const reloader = watchTlsFiles({
      targets: [{ name: 'https', files: liveFiles, pair: loadTlsPair(liveFiles), apply: (pair) => applied.push(pair) }], log: silentLogger, debounceMs: 50,
    });
    try {
      certs.renew();
      publish(2);
      await waitUntil(() => applied.length > 0, 5_000, 'the reload');
      expect(applied[0]!.cert.equals(readFileSync(certs.cert))).toBe(true);
      // A reload on request applies the pair even when unchanged.
      reloader.reload();
      expect(applied).toHaveLength(2);
    } finally {
      reloader.close();
    }
  });
});
