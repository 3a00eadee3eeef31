// The certificate files of the TLS listeners (HTTPS, MQTT over TLS and wss): reads a key and
// certificate pair, checks that it loads (PEM parses, the key matches the certificate) and, on request
// (SIGHUP) or when either file changes, loads it again and hands it to its listener. A pair that fails
// to load is logged and the one in use stays.

import { X509Certificate } from 'node:crypto';
import { readFileSync, realpathSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { Logger } from './log.js';

/** A private key and its certificate (the chain: the gateway's certificate first), in PEM. */
export interface TlsPair {
  key: Buffer;
  cert: Buffer;
}

/** The files of one listener's pair, and the option names a message gives for them. */
export interface TlsFiles {
  keyFile: string;
  certFile: string;
  /** `server.tls-key`, `mqtt.tls-key`, … */
  keyOption: string;
  certOption: string;
}

/** What a listener is given: the pair with the oldest protocol version accepted. */
export function secureContextOptions(pair: TlsPair): SecureContextOptions {
  return { key: pair.key, cert: pair.cert, minVersion: 'TLSv1.2' };
}

function readOption(option: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`${option}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** Reads a pair and checks that it loads; the error names the options and why. */
export function loadTlsPair(files: TlsFiles): TlsPair {
  const pair = { key: readOption(files.keyOption, files.keyFile), cert: readOption(files.certOption, files.certFile) };
  try {
    createSecureContext(secureContextOptions(pair));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`${files.keyOption}, ${files.certOption}: ${files.keyFile} and ${files.certFile} do not load as a key and its certificate: ${reason}`, { cause: err });
  }
  return pair;
}

/** What a log line says of a certificate: whom it names, until when, and its fingerprint. */
function describeCertificate(cert: Buffer): Record<string, string> {
  try {
    const x509 = new X509Certificate(cert);
    return { subject: x509.subject.replaceAll('\n', ', '), validTo: x509.validTo, fingerprint256: x509.fingerprint256 };
  } catch {
    return {};
  }
}

/** One listener whose pair is reloaded: its files, and where a loaded pair goes. */
export interface TlsReloadTarget {
  /** For the log: `https`, `mqtt`. */
  name: string;
  files: TlsFiles;
  /** The pair loaded at start. */
  pair: TlsPair;
  /** Puts a pair in use for new connections (Node's `server.setSecureContext`); open ones keep theirs. */
  apply(pair: TlsPair): void;
}

export interface TlsReloader {
  /** Loads every target's files again now (SIGHUP), even when they did not change. */
  reload(): void;
  /** Stops watching the files. */
  close(): void;
}

/** Quiet time after the last change of a file before it is read: a renewal writes the key and the certificate one after the other. */
const DEFAULT_DEBOUNCE_MS = 300;

const isSamePair = (a: TlsPair, b: TlsPair): boolean => a.key.equals(b.key) && a.cert.equals(b.cert);

/**
 * The directories to watch for a file, each with the names in it that matter. NOTE: a directory, not
 * the file: certbot and step replace a certificate by renaming a new file (or a symlink) over it, and
 * a watch on the file itself would follow the old inode. The target of a symlink is watched too, so
 * an edit in place there is seen.
 */
function watchPoints(path: string): Array<{ dir: string; name: string }> {
  const points = [{ dir: dirname(path), name: basename(path) }];
  try {
    const real = realpathSync(path);
    if (real !== path) points.push({ dir: dirname(real), name: basename(real) });
  } catch {
    // A file missing now is looked for again at the next change in its directory.
  }
  return points;
}

/** Watches each target's key and certificate files and reloads a pair when they change, or on `reload()`. */
export function watchTlsFiles(opts: { targets: readonly TlsReloadTarget[]; log: Logger; debounceMs?: number }): TlsReloader {
  const { log } = opts;
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const watchers: FSWatcher[] = [];
  // One pending reload per target, pushed back by each further change.
  const timers = new Map<TlsReloadTarget, NodeJS.Timeout>();
  const load = (target: TlsReloadTarget, cause: 'signal' | 'file'): void => {
    let pair: TlsPair;
    try {
      pair = loadTlsPair(target.files);
    } catch (err) {
      log.error('tls certificate not reloaded: the one in use stays', { listener: target.name, cause, reason: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (cause === 'file' && isSamePair(pair, target.pair)) return;
    try {
      target.apply(pair);
    } catch (err) {
      log.error('tls certificate not reloaded: the one in use stays', { listener: target.name, cause, reason: err instanceof Error ? err.message : String(err) });
      return;
    }
    target.pair = pair;
    log.info('tls certificate reloaded', { listener: target.name, cause, ...describeCertificate(pair.cert) });
  };
  const schedule = (target: TlsReloadTarget): void => {
    clearTimeout(timers.get(target));
    const timer = setTimeout(() => {
      timers.delete(target);
      load(target, 'file');
    }, debounceMs);
    timer.unref();
    timers.set(target, timer);
  };
  for (const target of opts.targets) {
    const points = [...watchPoints(target.files.keyFile), ...watchPoints(target.files.certFile)];
    for (const dir of new Set(points.map((p) => p.dir))) {
      const names = new Set(points.filter((p) => p.dir === dir).map((p) => p.name));
      try {
        // NOTE: names starting with `..` are the data links of a Kubernetes secret volume, swapped on update.
        const watcher = watch(dir, { persistent: false }, (_event, name) => {
          if (name === null || names.has(name) || name.startsWith('..')) schedule(target);
        });
        watcher.on('error', (err) => log.warn('tls certificate directory no longer watched: reload with SIGHUP', { listener: target.name, dir, err: err.message }));
        watchers.push(watcher);
      } catch (err) {
        log.warn('tls certificate directory not watched: reload with SIGHUP', { listener: target.name, dir, err: err instanceof Error ? err.message : String(err) });
      }
    }
  }
  return {
    reload: () => {
      for (const target of opts.targets) load(target, 'signal');
    },
    close: () => {
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      for (const w of watchers) w.close();
    },
  };
}
