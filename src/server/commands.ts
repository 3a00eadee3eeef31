// Commands to devices (edge.md §6): the dispatcher, a consumer of the journal feed, publishing on the
// embedded broker in-process, and the metrics it adds.

import { ANSWER_DROPS, createCommandDispatcher, type CommandDispatcher } from '../commands/index.js';
import type { WriteCore } from '../events.js';
import type { MetricsSource } from '../http/index.js';
import type { ContextService } from '../jsonld/index.js';
import { timeOrderedUuid, type Clock, type IdGenerator, type Logger } from '../lib/index.js';
import { commandProperties, commandTopic, deviceSubject } from '../mqtt/index.js';
import type { JournalFeed, Store } from '../store/index.js';
import type { Runtime } from './runtime.js';

export interface CommandWiring {
  store: Store;
  feed: JournalFeed;
  core: WriteCore;
  contexts: ContextService;
  clock: Clock;
  log: Logger;
  newId?: IdGenerator | undefined;
  runtime: Runtime;
}

/** The dispatcher, started: it reads the devices and open commands, then follows the journal. */
export function buildCommands(deps: CommandWiring): CommandDispatcher {
  const log = deps.log.child('commands');
  const dispatcher = createCommandDispatcher({
    store: deps.store, feed: deps.feed, core: deps.core, contexts: deps.contexts, clock: deps.clock, log,
    newId: deps.newId ?? timeOrderedUuid, deviceSubject,
    publish: (tenant, deviceId, payload) => {
      const mqtt = deps.runtime.mqtt;
      if (!mqtt) return Promise.reject(new Error('the embedded MQTT broker is not running'));
      return mqtt.publish(commandTopic(tenant, deviceId), payload, 1, { properties: commandProperties(tenant, deviceId, payload, deps.clock.now()) });
    },
  });
  dispatcher.start().catch((err: unknown) => log.error('the command dispatcher did not start', { err }));
  return dispatcher;
}

/** Commands issued, delivered, answered and expired, those open now, and the answers dropped by reason. */
export function commandMetrics(commands: CommandDispatcher): MetricsSource[] {
  const counter = (name: string, help: string, of: (s: ReturnType<CommandDispatcher['stats']>) => number): MetricsSource => ({
    name, help, type: 'counter', collect: () => of(commands.stats()),
  });
  return [
    counter('edgeld_commands_issued_total', 'Commands issued to devices (writes of a command attribute)', (s) => s.issued),
    counter('edgeld_commands_delivered_total', 'Commands acknowledged (PUBACK) by their device', (s) => s.delivered),
    counter('edgeld_commands_answered_total', 'Commands answered by their device on cmdexe (OK or ERROR)', (s) => s.answered),
    counter('edgeld_commands_expired_total', 'Commands that expired unanswered or were superseded by a later one of the same name', (s) => s.expired),
    counter('edgeld_commands_pruned_total', 'Finished commands removed from the commands table past commands.retention', (s) => s.pruned),
    { name: 'edgeld_commands_open', help: 'Commands pending or delivered, not yet answered or expired', collect: () => commands.stats().open },
    {
      name: 'edgeld_command_answers_dropped_total', type: 'counter', labelNames: ['reason'],
      help: 'Answers on cmdexe dropped, by reason (invalid, unknown, foreign, expired, duplicate)',
      collect: () => {
        const dropped = commands.stats().dropped;
        return ANSWER_DROPS.map((reason) => ({ labels: { reason }, value: dropped[reason] }));
      },
    },
  ];
}
