// Route of the database's use of the disk (GET /edgeld/v1/storage, docs/history.md, Disk budget):
// pages in use against storage.max-bytes, free disk space, bytes per level of history (measured in
// the background, with their age), bytes written per UTC day over the last week and the days left.

import { AccessDeniedError, formatDateTime, type Json } from '../../ngsi/index.js';
import { tiersAgeSeconds, type StorageReport } from '../../temporal/index.js';
import { resource, type App, type AppDeps } from '../app-env.js';
import { readParams } from '../params.js';
import { sendJson } from '../respond.js';
import { actorOf } from '../request-context.js';

const day = (ms: number): string => formatDateTime(ms).slice(0, 10);

function render(r: StorageReport, now: number): Json {
  return {
    usedBytes: r.usedBytes, fileBytes: r.fileBytes, walBytes: r.walBytes, freeDiskBytes: r.freeDiskBytes ?? null,
    budget: {
      maxBytes: r.maxBytes ?? null, highWatermarkBytes: r.watermarks?.high ?? null, lowWatermarkBytes: r.watermarks?.low ?? null,
      writesRefused: r.budget.refusing, dropped: { ...r.budget.dropped }, holds: r.budget.holds,
    },
    tiers: r.tiers === undefined ? null : {
      ...r.tiers.bytes, measuredAt: formatDateTime(r.tiers.at), ageSeconds: Math.round(tiersAgeSeconds(r, now) ?? 0),
    },
    written: { days: r.written.map((d) => ({ day: day(d.day), bytes: d.bytes })), bytesPerDay: r.bytesPerDay, daysLeft: r.daysLeft ?? null },
  };
}

export function registerStorageRoutes(app: App, deps: AppDeps): void {
  const { storage } = deps;
  resource(app, '/edgeld/v1/storage', {
    GET: (c) => {
      readParams(c.req.url, []);
      if (!actorOf(c).admin) throw new AccessDeniedError('Access denied', 'The storage figures need the admin role');
      const now = storage.now();
      return sendJson(render(storage.report(now), now));
    },
  });
}
