// Cron jobs (node-cron): each job body runs on its schedule, never overlapping itself; stop() ends
// the schedules and waits for runs in progress, so shutdown closes nothing under a running job.

import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../lib/index.js';

export type JobBody = () => Promise<unknown> | unknown;

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
        await job.body();
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
      const running: Array<Promise<void>> = [];
      for (const job of jobs.values()) {
        await job.task.destroy();
        if (job.running) running.push(job.running);
      }
      await Promise.all(running);
    },
  };
}
