// The lockout of repeated failed logins (application.lockout), shared by the token endpoint and MQTT
// CONNECT so that one address or user name is counted across both, and its metrics.

import type { Config } from '../config/index.js';
import type { MetricsSource } from '../http/index.js';
import { createLoginLimiter, type Clock, type LoginChannel, type LoginLimiter, type LoginLimiterStats, type Logger } from '../lib/index.js';

/** The limiter of failed logins; undefined when application.lockout.enabled is off. */
export function buildLoginLimiter(deps: { config: Config; clock: Clock; log: Logger }): LoginLimiter | undefined {
  const lockout = deps.config.application.lockout;
  if (!lockout.enabled) return undefined;
  return createLoginLimiter({
    clock: deps.clock, log: deps.log.child('auth'),
    limits: {
      nameFailures: lockout.nameFailures, addressFailures: lockout.addressFailures, baseDelayMs: lockout.baseDelay, maxDelayMs: lockout.maxDelay,
      forgetAfterMs: lockout.forgetAfter, maxEntries: lockout.maxEntries,
    },
  });
}

const CHANNELS: readonly LoginChannel[] = ['http', 'mqtt'];

/** Failed and refused logins by channel, and how many addresses and names are tracked (none when off). */
export function loginMetrics(limiter: LoginLimiter | undefined): MetricsSource[] {
  if (limiter === undefined) return [];
  const byChannel = (pick: (s: LoginLimiterStats) => Record<LoginChannel, number>) => () => {
    const counts = pick(limiter.stats());
    return CHANNELS.map((channel) => ({ labels: { channel }, value: counts[channel] }));
  };
  return [
    {
      name: 'edgeld_login_failures_total', help: 'Failed logins (POST /auth/token, MQTT CONNECT), by channel', type: 'counter', labelNames: ['channel'],
      collect: byChannel((s) => s.failures),
    },
    {
      name: 'edgeld_login_refusals_total', help: 'Logins refused unheard while their address or user name had to wait, by channel', type: 'counter',
      labelNames: ['channel'], collect: byChannel((s) => s.refused),
    },
    { name: 'edgeld_login_limiter_entries', help: 'Addresses and user names the login lockout tracks', collect: () => limiter.stats().entries },
  ];
}
