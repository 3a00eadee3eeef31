// Cron jobs: each job body runs on its schedule (UTC), never overlapping itself; stop() ends the
// schedules, tells the runs in progress through their signal (a long job working in chunks stops at
// the next one) and waits for them, so shutdown closes nothing under a running job. One timer per job
// is armed for its next firing (at most an hour ahead, so a wall clock set by NTP after boot is
// followed); a clock that jumps over several firings runs the job once.

import type { Logger } from '../lib/index.js';
import { parseCron, type CronSchedule } from './cron.js';

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
  schedule: CronSchedule;
  timer: NodeJS.Timeout | undefined;
  body: JobBody;
  running: Promise<void> | undefined;
}

/** The longest a timer waits before the next firing is computed again from the wall clock. */
const MAX_WAIT_MS = 3_600_000;

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

  /** Sets the job's timer for its first firing after `after`. */
  const arm = (name: string, job: Job, after: number): void => {
    if (stopped) return;
    const due = job.schedule.next(after);
    job.timer = setTimeout(() => {
      const now = Date.now();
      if (now < due) return arm(name, job, now - 1); // woken early: an hour's cap, or the clock went back
      void run(name);
      arm(name, job, now);
    }, Math.min(Math.max(due - Date.now(), 0), MAX_WAIT_MS));
    job.timer.unref(); // housekeeping never keeps the process alive on its own
  };

  return {
    schedule(name, expression, body) {
      if (stopped) throw new Error('the job scheduler is stopped');
      if (jobs.has(name)) throw new Error(`job ${name} is already scheduled`);
      let schedule: CronSchedule;
      try {
        schedule = parseCron(expression);
      } catch (err) {
        throw new Error(`job ${name}: invalid cron expression '${expression}': ${(err as Error).message}`);
      }
      const job: Job = { schedule, timer: undefined, body, running: undefined };
      jobs.set(name, job);
      arm(name, job, Date.now());
      log.info('job scheduled', { job: name, schedule: expression });
    },
    run,
    async stop() {
      if (stopped) return;
      stopped = true;
      stopping.abort();
      const running: Array<Promise<void>> = [];
      for (const job of jobs.values()) {
        clearTimeout(job.timer);
        if (job.running) running.push(job.running);
      }
      await Promise.all(running);
    },
  };
}
