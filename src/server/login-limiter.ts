// The lockout of repeated failed logins (application.lockout), shared by the token endpoint and MQTT
// CONNECT so that one address or user name is counted across both, the global bound on concurrent
// password checks, and their metrics.

import { createSecretChecks, type SecretChecks } from '../auth/index.js';
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
      forgetAfterMs: lockout.forgetAfter, maxEntries: lockout.maxEntries, maxAnswerDelayMs: lockout.maxAnswerDelay,
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

/** The one bound on password and device secret checks of the gateway (application.lockout.max-*-checks). */
export function buildSecretChecks(config: Config): SecretChecks {
  const { maxConcurrentChecks, maxQueuedChecks } = config.application.lockout;
  return createSecretChecks({ maxConcurrent: maxConcurrentChecks, maxQueued: maxQueuedChecks });
}

/** Password checks running, waiting, and refused because too many were waiting. */
export function secretCheckMetrics(checks: SecretChecks): MetricsSource[] {
  return [
    { name: 'edgeld_password_checks_running', help: 'Password and device secret checks running now', collect: () => checks.stats().running },
    { name: 'edgeld_password_checks_queued', help: 'Password and device secret checks waiting for a free slot', collect: () => checks.stats().queued },
    {
      name: 'edgeld_password_checks_refused_total', type: 'counter',
      help: 'Logins refused at once because application.lockout.max-queued-checks checks were already waiting (HTTP 429, MQTT CONNACK server unavailable)',
      collect: () => checks.stats().refused,
    },
  ];
}
