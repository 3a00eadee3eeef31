// The downlink from the cloud (edge spec §7): the subscription kept upstream, the connection out to
// the MQTT broker its notifications arrive on (or the HTTP route they are posted to), and the
// counters the status and /metrics show. Each notification is applied through the write core as
// the downlink subject, which the drain never forwards (the loop guard).

import type { WriteCore } from '../events.js';
import type { Clock, Logger } from '../lib/index.js';
import type { Iri, TermMapper } from '../ngsi/index.js';
import { applyEntities, entitiesOf, type RefusalReason } from './downlink-apply.js';
import { createDownlinkKeeper, type DownlinkKeeperDeps, type DownlinkSubscriptionStatus } from './downlink-keeper.js';
import { createDownlinkLink, type DownlinkLink, type DownlinkLinkOptions } from './downlink-link.js';

/** What the status endpoint shows of the downlink; instants are epoch ms. */
export interface DownlinkStatus {
  /** mqtt or http: how notifications arrive. */
  transport: 'mqtt' | 'http';
  /** Connected to the MQTT broker (http: always true). */
  connected: boolean;
  /** The MQTT broker without credentials, or the route's URL. */
  broker: string;
  subscription: DownlinkSubscriptionStatus;
  lastNotification: number | undefined;
  /** Attributes written. */
  applied: number;
  /** Entities or attributes refused, by reason. */
  refused: Record<RefusalReason, number>;
  /** Connection failures to the MQTT broker. */
  connectionFailures: number;
  lastError: { at: number; message: string } | undefined;
}

export interface DownlinkDeps {
  core: WriteCore;
  /** The upstream context: its term mapper and the URL its Link names. */
  context(): Promise<{ mapper: TermMapper; linkUrl: string }>;
  keeper: Omit<DownlinkKeeperDeps, 'linkUrl' | 'log' | 'clock' | 'newId'>;
  /** Set for the MQTT transport (the topic comes from the keeper's record). */
  mqtt: Omit<DownlinkLinkOptions, 'topic' | 'clientId'> | undefined;
  options: { tenant: string; types: readonly string[]; attributes: readonly string[]; maxBytes: number };
  clock: Clock;
  log: Logger;
  newId: () => string;
}

export interface Downlink {
  start(): void;
  status(): DownlinkStatus;
  /** Handles one notification posted to the HTTP route (JSON text); resolves once applied or refused. */
  receive(text: string): Promise<void>;
  stop(): Promise<void>;
}

const emptyRefusals = (): Record<RefusalReason, number> => ({ invalid: 0, 'too-large': 0, type: 0, attribute: 0, entity: 0, stale: 0, untimed: 0 });

export function createDownlink(deps: DownlinkDeps): Downlink {
  const { options, clock, log } = deps;
  const keeper = createDownlinkKeeper({ ...deps.keeper, linkUrl: async () => (await deps.context()).linkUrl, clock, log, newId: deps.newId });
  const counters = { applied: 0, refused: emptyRefusals(), lastNotification: undefined as number | undefined };
  let selection: { types: Set<Iri>; attrs: Set<Iri>; mapper: TermMapper } | undefined;

  const refuse = (reason: RefusalReason, message: string): void => {
    counters.refused[reason] += 1;
    log.warn(message, { reason });
  };

  const handle = async (payload: Buffer | string): Promise<void> => {
    counters.lastNotification = clock.now();
    if (Buffer.byteLength(payload) > options.maxBytes) return refuse('too-large', `downlink notification over federation.downlink.max-bytes (${options.maxBytes}) refused`);
    let message: unknown;
    try {
      message = JSON.parse(payload.toString());
    } catch {
      return refuse('invalid', 'downlink message that is not JSON refused');
    }
    const entities = entitiesOf(message);
    if (entities === undefined) return refuse('invalid', 'downlink message that is not an NGSI-LD notification refused');
    try {
      if (selection === undefined) {
        const { mapper } = await deps.context();
        selection = { mapper, types: new Set(options.types.map((t) => mapper.expandTerm(t))), attrs: new Set(options.attributes.map((a) => mapper.expandTerm(a))) };
      }
      const outcome = await applyEntities(entities, { tenant: options.tenant, ...selection }, { core: deps.core, newId: deps.newId, log }, clock.now());
      counters.applied += outcome.applied;
      for (const [reason, n] of outcome.refused) counters.refused[reason] += n;
    } catch (err) {
      refuse('invalid', `downlink notification not applied: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const link: DownlinkLink | undefined = deps.mqtt === undefined ? undefined : createDownlinkLink({
    options: { ...deps.mqtt, topic: keeper.record.topic, clientId: `edgeld-downlink-${keeper.record.subscriptionId.replace(/^.*:/, '').replace(/[^A-Za-z0-9]/g, '').slice(-40)}` },
    handle, now: () => clock.now(), log,
  });

  return {
    start() {
      log.info('downlink started', { topic: keeper.record.topic, subscriptionId: keeper.record.subscriptionId });
      keeper.start();
      link?.start();
    },
    status() {
      const sub = keeper.status();
      const conn = link?.status();
      const errors = [sub.lastError, conn?.lastError].filter((e) => e !== undefined).sort((a, b) => b.at - a.at);
      return {
        transport: link === undefined ? 'http' : 'mqtt', connected: conn?.connected ?? true, broker: conn?.broker ?? deps.keeper.options.target.url,
        subscription: sub, lastNotification: counters.lastNotification, applied: counters.applied, refused: { ...counters.refused },
        connectionFailures: conn?.failures ?? 0, lastError: errors[0],
      };
    },
    receive: (text) => handle(text),
    async stop() {
      await link?.stop();
      await keeper.stop();
    },
  };
}
