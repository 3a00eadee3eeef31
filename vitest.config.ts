import { defineConfig } from 'vitest/config';

/**
 * The MQTT tests run again with MQTT 5 clients (test/helpers/mqtt.ts reads the version): those of the
 * broker, commands and notifications over MQTT. Left at 3.1.1 only: the files of pure functions (no
 * client), those that name both versions themselves (session-expiry, reason-codes, mqtt5-properties)
 * and the slow end-to-end files, whose MQTT 5 cases those files and mqtt-durable's own v5 case cover.
 */
const MQTT_V5 = [
  'test/mqtt/**/*.test.ts',
  'test/commands/commands-mqtt.test.ts',
  'test/commands/commands-auth.test.ts',
  'test/api/subscription/notifications-mqtt.test.ts',
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
