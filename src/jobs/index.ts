// Scheduled jobs: cron registration from config, no overlapping runs, stopped on shutdown.
// Job bodies live in the modules that own them; server.ts hands them in.

/** Builds a scheduler; each job runs its body on a cron schedule, never twice at once. */
export { createJobScheduler, type JobBody, type JobScheduler } from './scheduler.js';
