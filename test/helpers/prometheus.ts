// Starts a real Prometheus (Debian package prometheus) on a free port of 127.0.0.1 with a temp
// data directory and the configuration a test writes, and queries its HTTP API; bounded waits only.

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './mqtt.js';
import { within } from './process.js';
import { waitUntil } from './fake-cloud.js';

export interface PrometheusSample {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusProcess {
  url: string;
  /** An instant query through /api/v1/query; throws unless Prometheus answers `success`. */
  query(expr: string): Promise<PrometheusSample[]>;
  /** GET of an API path (`/api/v1/rules`), its `data`; throws unless `success`. */
  api(path: string): Promise<unknown>;
  stderr(): string;
  stop(): Promise<void>;
}

/** `config`: the text of prometheus.yml. Resolves once /-/ready answers 200. */
export async function startPrometheus(dir: string, config: string, timeoutMs = 30_000): Promise<PrometheusProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const child = spawn('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => { err += chunk.toString(); });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (e) => reject(new Error(`prometheus could not start (apt-get install prometheus): ${e.message}`)));
  });
  await spawned;
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    await within(exited, 10_000, 'prometheus exit').catch(async () => {
      child.kill('SIGKILL');
      await within(exited, 5_000, 'prometheus exit after SIGKILL');
    });
  };
  try {
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${err}`);
      return (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200;
    }, timeoutMs, 'Prometheus ready');
  } catch (e) {
    await stop();
    throw e;
  }
  const api = async (path: string): Promise<unknown> => {
    const res = await fetch(url + path);
    const body = (await res.json()) as { status: string; data?: unknown; error?: string }; // NOTE: the API's envelope (Prometheus HTTP API docs)
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    api,
    async query(expr) {
      const data = (await api(`/api/v1/query?query=${encodeURIComponent(expr)}`)) as { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> }; // NOTE: the API's instant-vector shape
      if (data.resultType !== 'vector') return [];
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    stderr: () => err,
    stop,
  };
}
