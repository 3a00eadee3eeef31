import { defineConfig } from 'vitest/config';

/**
 * The MQTT tests run again with MQTT 5 clients (test/helpers/mqtt.ts reads the version): those of the
 * broker, commands, notifications, Home Assistant, metrics and the disk budget over MQTT, the
 * dashboard's pages, and the end-to-end files of ingestion, commands (the cloud-command chain
 * included), notifications, kill -9 cycles and SIGTERM under load. Left at 3.1.1 only: the files of
 * pure functions (no client), those that name their versions themselves (session-expiry, reason-codes,
 * mqtt5-properties, mqtt-durable's v5 case, https's wss client), and those whose clients talk to
 * mosquitto, not to the embedded broker (the downlink's, whose gateway client speaks 3.1.1, and the
 * MQTT sender's, whose version is the subscription's `MQTT-Version`).
 */
const MQTT_V5 = [
  'test/mqtt/**/*.test.ts',
  'test/commands/commands-mqtt.test.ts',
  'test/commands/commands-auth.test.ts',
  'test/api/subscription/notifications-mqtt.test.ts',
  'test/api/errors/insufficient-storage.test.ts',
  'test/api/operations/disk-budget.test.ts',
  'test/api/auth/notifications-follow-rights.test.ts',
  'test/api/registrations/csource-subscriptions.test.ts',
  'test/home-assistant/**/*.test.ts',
  'test/contrib/node-red-flow.test.ts',
  'test/ui/commands.test.ts',
  'test/e2e/mqtt-ingest.test.ts',
  'test/e2e/mqtt-process.test.ts',
  'test/e2e/commands.test.ts',
  'test/e2e/unclean-stop.test.ts',
  'test/e2e/notifications.test.ts',
  'test/e2e/cloud-command.test.ts',
  'test/e2e/kill-cycles.test.ts',
  'test/e2e/sigterm-under-load.test.ts',
  'test/api/operations/metrics.test.ts',
  'test/ui/dashboard.test.ts',
  'test/ui/dashboard-route.test.ts',
];
const NO_CLIENT_OR_BOTH = [
  'test/mqtt/topic-classes.test.ts',
  'test/mqtt/packet-guard.test.ts',
  'test/mqtt/ingest-plain.test.ts',
  'test/mqtt/command-answer.test.ts',
  'test/mqtt/persistence-abstract.test.ts',
  'test/mqtt/session-expiry.test.ts',
  'test/mqtt/reason-codes.test.ts',
  'test/mqtt/mqtt5-properties.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-report.json' }]] : ['default'],
    projects: [
      { extends: true, test: { name: 'edgeld', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'mqtt-5', include: MQTT_V5, exclude: NO_CLIENT_OR_BOTH, env: { EDGELD_TEST_MQTT_VERSION: '5' } } },
    ],
  },
});
