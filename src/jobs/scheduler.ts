// Cron jobs (node-cron): each job body runs on its schedule, never overlapping itself; stop() ends
// the schedules, tells the runs in progress through their signal (a long job working in chunks
// stops at the next one) and waits for them, so shutdown closes nothing under a running job.

import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../lib/index.js';

/** A job's work; `signal` aborts when the scheduler stops (a run may then end early). */
export type JobBody = (signal: AbortSignal) => Promise<unknown> | unknown;

export interface JobScheduler {
  /** Schedules a job; throws when the cron expression is invalid. */
  schedule(name: string, expression: string, body: JobBody): void;
  /** Runs a job now unless it is already running (the schedule calls this too); resolves when done. */
  run(name: string): Promise<void>;
  /** Stops every schedule and waits for the runs in progress. Idempotent. */
  stop(): Promise<void>;
}

interface Job {
  task: ScheduledTask;
  body: JobBody;
  running: Promise<void> | undefined;
}

export function createJobScheduler({ log }: { log: Logger }): JobScheduler {
  const jobs = new Map<string, Job>();
  const stopping = new AbortController();
  let stopped = false;

  const run = (name: string): Promise<void> => {
    const job = jobs.get(name);
    if (!job || stopped) return Promise.resolve();
    // No overlap: a tick that finds the previous run still going is skipped.
    if (job.running) {
      log.warn('job still running; tick skipped', { job: name });
      return job.running;
    }
    const started = Date.now();
    job.running = (async () => {
      try {
        await job.body(stopping.signal);
        log.debug('job done', { job: name, ms: Date.now() - started });
      } catch (err) {
        log.error('job failed', { job: name, err });
      } finally {
        job.running = undefined;
      }
    })();
    return job.running;
  };

  return {
    schedule(name, expression, body) {
      if (stopped) throw new Error('the job scheduler is stopped');
      if (jobs.has(name)) throw new Error(`job ${name} is already scheduled`);
      if (!cron.validate(expression)) throw new Error(`job ${name}: invalid cron expression '${expression}'`);
      const task = cron.schedule(expression, () => run(name), { name, noOverlap: true, timezone: 'UTC' });
      jobs.set(name, { task, body, running: undefined });
      log.info('job scheduled', { job: name, schedule: expression });
    },
    run,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopping.abort();
      const running: Array<Promise<void>> = [];
      for (const job of jobs.values()) {
        await job.task.destroy();
        if (job.running) running.push(job.running);
      }
      await Promise.all(running);
    },
  };
}
