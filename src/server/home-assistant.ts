// Home Assistant MQTT discovery (integrations.home-assistant): built when enabled, publishing on the
// embedded broker in-process, with Home Assistant's commands written through the entity use cases
// (the write core's permission checks, then the command dispatcher). Off, its journal reader's
// cursor is dropped so that it holds no journal rows back.

import type { CommandDispatcher } from '../commands/index.js';
import type { Config } from '../config/index.js';
import type { EntityService } from '../entities/index.js';
import { COMMAND_DROPS, createHomeAssistant, removeOwnRetained, type HomeAssistant } from '../home-assistant/index.js';
import type { MetricsSource } from '../http/index.js';
import type { ContextService } from '../jsonld/index.js';
import type { Clock, Logger } from '../lib/index.js';
import { appendAttributes } from '../ngsi/index.js';
import type { JournalFeed, Store } from '../store/index.js';
import type { Runtime } from './runtime.js';

export interface HomeAssistantWiring {
  config: Config;
  store: Store;
  feed: JournalFeed;
  contexts: ContextService;
  entities: EntityService;
  log: Logger;
  clock: Clock;
  runtime: Runtime;
}

/** The journal reader of the integration (as in home-assistant/service.ts). */
const READER = 'home-assistant';

/** A device record was written: the command dispatcher and Home Assistant's configs follow. */
export function deviceWrittenOf(commands: Pick<CommandDispatcher, 'deviceWritten'>, homeAssistant: HomeAssistant | undefined): (tenant: string, deviceId: string) => void {
  return (tenant, deviceId) => {
    commands.deviceWritten(tenant, deviceId);
    homeAssistant?.deviceWritten(tenant, deviceId);
  };
}

export function buildHomeAssistant(deps: HomeAssistantWiring): HomeAssistant | undefined {
  const { enabled, discoveryPrefix, nodeId } = deps.config.integrations.homeAssistant;
  const options = { prefix: discoveryPrefix, nodeId };
  if (!enabled) {
    // It ran before: what it announced is withdrawn (its reader's cursor says it ran).
    if (deps.store.journal.cursor(READER) !== undefined) {
      const removed = removeOwnRetained(deps.store, options);
      deps.store.journal.dropReader(READER);
      deps.log.info('home assistant discovery off: its retained messages removed', { removed });
    }
    return undefined;
  }
  return createHomeAssistant({
    store: deps.store, feed: deps.feed, contexts: deps.contexts, log: deps.log.child('home-assistant'), clock: deps.clock,
    options,
    publish: (topic, payload, retain) => {
      const mqtt = deps.runtime.mqtt;
      return mqtt ? mqtt.publish(topic, payload, 1, { retain }) : Promise.reject(new Error('the embedded MQTT broker is not running'));
    },
    writeCommand: async (actor, entityId, attr, value) => {
      await deps.entities.update(actor, entityId, (current, now) =>
        appendAttributes(current, { [attr]: [{ kind: 'Property', value, createdAt: now, modifiedAt: now, sub: {} }] }, { noOverwrite: false, now }));
    },
  });
}

/** Home Assistant's commands written and dropped by reason; none when the integration is off. */
export function homeAssistantMetrics(homeAssistant: HomeAssistant | undefined): MetricsSource[] {
  if (homeAssistant === undefined) return [];
  return [
    { name: 'edgeld_home_assistant_commands_total', type: 'counter', help: 'Commands from Home Assistant written as command attributes', collect: () => homeAssistant.stats().commands },
    {
      name: 'edgeld_home_assistant_commands_dropped_total', type: 'counter', labelNames: ['reason'],
      help: 'Commands from Home Assistant dropped, by reason (unknown, payload, refused)',
      collect: () => {
        const { dropped } = homeAssistant.stats();
        return COMMAND_DROPS.map((reason) => ({ labels: { reason }, value: dropped[reason] }));
      },
    },
  ];
}
