// Reads a process's memory, CPU and disk counters from /proc (Linux only) and finds where a path is mounted.

import { readFile } from 'node:fs/promises';
import { readFileSync, realpathSync } from 'node:fs';

async function readProcField(pid: number, file: string, pattern: RegExp): Promise<number | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/${file}`, 'utf8');
    const match = pattern.exec(text);
    return match?.[1] === undefined ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/** Resident set size in bytes, or undefined when /proc/<pid>/status is unreadable. */
export async function readRssBytes(pid: number): Promise<number | undefined> {
  const kib = await readProcField(pid, 'status', /^VmRSS:\s+(\d+)\s+kB$/m);
  return kib === undefined ? undefined : kib * 1024;
}

/** Bytes the process caused to be sent to storage, or undefined when /proc/<pid>/io is unreadable. */
export function readWriteBytes(pid: number): Promise<number | undefined> {
  return readProcField(pid, 'io', /^write_bytes:\s+(\d+)$/m);
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux architecture Node runs on). */
const USER_HZ = 100;

/** CPU time (user + system) the process has used in ms, or undefined when /proc/<pid>/stat is unreadable. */
export async function readCpuMs(pid: number): Promise<number | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return Number.isFinite(user) && Number.isFinite(system) ? ((user + system) * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/** Samples the RSS of a process at a fixed interval and keeps the maximum. */
export class RssSampler {
  #max = 0;
  /** The largest RSS since the last window() call. */
  #windowMax = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 100,
  ) {}

  start(): void {
    this.#timer = setInterval(() => {
      void readRssBytes(this.pid).then((rss) => {
        if (rss === undefined) return;
        if (rss > this.#max) this.#max = rss;
        if (rss > this.#windowMax) this.#windowMax = rss;
      });
    }, this.intervalMs);
  }

  /** The largest RSS seen since the last call (or the start); undefined when none was read. */
  window(): number | undefined {
    const max = this.#windowMax;
    this.#windowMax = 0;
    return max === 0 ? undefined : max;
  }

  /** Stops sampling; returns the largest RSS seen, or undefined when none could be read. */
  async stop(): Promise<number | undefined> {
    clearInterval(this.#timer);
    const last = await readRssBytes(this.pid);
    if (last !== undefined && last > this.#max) this.#max = last;
    return this.#max === 0 ? undefined : this.#max;
  }
}

/** The file system type holding `path` (`ext4`, `tmpfs`, ...), from /proc/mounts; undefined if unknown. */
export function fileSystemOf(path: string): string | undefined {
  try {
    const real = realpathSync(path);
    let best: { mount: string; type: string } | undefined;
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, mount, type] = line.split(' ');
      if (mount === undefined || type === undefined) continue;
      const inside = real === mount || real.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
      if (inside && (!best || mount.length > best.mount.length)) best = { mount, type };
    }
    return best?.type;
  } catch {
    return undefined;
  }
}
