// The topic classes of the embedded broker and who owns each (edge.md §1): the one table the
// access hooks check at PUBLISH, at SUBSCRIBE and at the delivery of every message.
//
// ngsi/<tenant>/<deviceId>/attrs[/<attr>]  measurement     read: the device, administrators
// ngsi/<tenant>/<deviceId>/status          status          read: the device, administrators
// ngsi/<tenant>/<deviceId>/cmd             command         read: the device, administrators; published by the broker only
// ngsi/<tenant>/<deviceId>/cmdexe          command answer  read: the device, administrators; published by the device (or an administrator)
// ngsi/<anything else>                     device (other)  read: the device it names, administrators
// edgeld/notify/<subject>/…                notification    read: that subject, administrators; published by the broker only
// edgeld/dashboard/…                       dashboard       read: the owner of the subscription notifying there, administrators; broker only
// edgeld/ha/<tenant>/<deviceId>/<cmd>/set  HA command      read: administrators; published by subjects (a write of the command, checked by the write core)
// edgeld/ha/…                              HA state        read: administrators; published by the broker only
// $…                                       system          read: administrators; published by the broker only
// anything else                            free            any authenticated client; a subscription's topic there is its owner's

import { isTenantName } from '../ngsi/index.js';
import { isDeviceId } from '../devices/index.js';
import { boundedMemo } from '../lib/index.js';
import { HOME_ASSISTANT_PREFIX, parseCommandTopic } from '../home-assistant/index.js';
import { DEFAULT_TENANT_SEGMENT, MEASUREMENT_PREFIX } from './ingest.js';

/** Where the notifications of a subject's subscriptions go: `edgeld/notify/<subject, URI-encoded>/…`. */
const NOTIFY_PREFIX = 'edgeld/notify/';
/** Where the dashboard's live views are notified (their owner is the subscription's). */
const DASHBOARD_PREFIX = 'edgeld/dashboard/';
/**
 * The topic a refused publish is moved to before Aedes handles it further: nobody may subscribe to
 * it and nothing is delivered from it, so the message is neither retained, queued nor relayed.
 */
export const REFUSED_TOPIC = '$edgeld/refused';

type DeviceTopicKind = 'measurement' | 'status' | 'command' | 'command-answer' | 'device-other';

export type TopicClass =
  | { readonly kind: DeviceTopicKind; readonly tenant: string; readonly deviceId: string }
  | { readonly kind: 'ngsi-other' }
  /** subject: undefined when the segment is no subject's encoding (administrators' only). */
  | { readonly kind: 'notification'; readonly subject: string | undefined }
  | { readonly kind: 'dashboard' }
  /** Home Assistant's command for a device (tenant '' for the default one). */
  | { readonly kind: 'ha-command'; readonly tenant: string; readonly deviceId: string; readonly command: string }
  | { readonly kind: 'ha-state' }
  | { readonly kind: 'system' }
  | { readonly kind: 'free' };

/** Who reads or publishes, as the rules see it. */
export type Party =
  | { readonly kind: 'device'; readonly tenant: string; readonly deviceId: string }
  | { readonly kind: 'subject'; readonly subject: string | undefined; readonly admin: boolean };

const DEVICE_KINDS: Readonly<Record<string, DeviceTopicKind>> = { attrs: 'measurement', status: 'status', cmd: 'command', cmdexe: 'command-answer' };
const NGSI_OTHER: TopicClass = { kind: 'ngsi-other' };
const DASHBOARD: TopicClass = { kind: 'dashboard' };
const SYSTEM: TopicClass = { kind: 'system' };
const FREE: TopicClass = { kind: 'free' };
const HA_STATE: TopicClass = { kind: 'ha-state' };
/** Topics classified at most (the same few are published on again and again). */
const MAX_CACHED_CLASSES = 10_000;

function classify(topic: string): TopicClass {
  if (topic.startsWith('$')) return SYSTEM;
  if (topic.startsWith(MEASUREMENT_PREFIX)) {
    const [, tenantSegment, deviceId, kind] = topic.split('/');
    if (tenantSegment === undefined || deviceId === undefined || !isTenantName(tenantSegment) || !isDeviceId(deviceId)) return NGSI_OTHER;
    const tenant = tenantSegment === DEFAULT_TENANT_SEGMENT ? '' : tenantSegment;
    const known = kind === undefined || !Object.hasOwn(DEVICE_KINDS, kind) ? undefined : DEVICE_KINDS[kind];
    return { kind: known ?? 'device-other', tenant, deviceId };
  }
  if (topic.startsWith(NOTIFY_PREFIX)) {
    const segment = topic.slice(NOTIFY_PREFIX.length).split('/', 1)[0] ?? '';
    try {
      return { kind: 'notification', subject: decodeURIComponent(segment) };
    } catch {
      return { kind: 'notification', subject: undefined };
    }
  }
  if (topic.startsWith(DASHBOARD_PREFIX)) return DASHBOARD;
  if (topic.startsWith(HOME_ASSISTANT_PREFIX)) return classifyHomeAssistant(topic);
  return FREE;
}

function classifyHomeAssistant(topic: string): TopicClass {
  const c = parseCommandTopic(topic);
  if (c === undefined || !isTenantName(c.tenantSegment) || !isDeviceId(c.deviceId)) return HA_STATE;
  return { kind: 'ha-command', tenant: c.tenantSegment === DEFAULT_TENANT_SEGMENT ? '' : c.tenantSegment, deviceId: c.deviceId, command: c.command };
}

/** The class of a topic name (memoized; the result is read-only). */
export const classifyTopic: (topic: string) => TopicClass = boundedMemo(MAX_CACHED_CLASSES, classify);

/** The notification prefix of a subject: `edgeld/notify/<subject, URI-encoded>/`. */
export function notifyPrefixOf(subject: string): string {
  return `${NOTIFY_PREFIX}${encodeURIComponent(subject)}/`;
}

const isDeviceOf = (party: Party, c: { tenant: string; deviceId: string }): boolean =>
  party.kind === 'device' && party.tenant === c.tenant && party.deviceId === c.deviceId;

const isAdmin = (party: Party): boolean => party.kind === 'subject' && party.admin;

/**
 * Whether `party` may receive a message on a topic of class `c`. `owners`: the subjects owning the
 * subscriptions that notify on that topic (undefined: none does; an ownerless one counts as '').
 */
export function mayRead(c: TopicClass, party: Party, owners: ReadonlySet<string> | undefined): boolean {
  if (isAdmin(party)) return true;
  switch (c.kind) {
    case 'measurement': case 'status': case 'command': case 'command-answer': case 'device-other':
      return isDeviceOf(party, c);
    case 'ngsi-other': case 'system': case 'ha-command': case 'ha-state':
      return false;
    case 'notification':
      return party.kind === 'subject' && c.subject !== undefined && party.subject === c.subject;
    case 'dashboard':
      return party.kind === 'subject' && owners !== undefined && party.subject !== undefined && owners.has(party.subject);
    case 'free':
      return owners === undefined || (party.kind === 'subject' && party.subject !== undefined && owners.has(party.subject));
  }
}

/**
 * Whether a client may publish on a topic of class `c` (before ingestion, which checks a subject's
 * write permission on a measurement): 'broker' for the topics only the broker publishes on (a client
 * trying is disconnected), 'no' for a publish dropped, 'ingest' for measurements, 'yes' otherwise.
 */
export function publishRule(c: TopicClass, party: Party, owners: ReadonlySet<string> | undefined): 'yes' | 'no' | 'ingest' | 'broker' {
  switch (c.kind) {
    case 'system': case 'command': case 'notification': case 'dashboard': case 'ha-state':
      return 'broker';
    case 'ha-command':
      return party.kind === 'subject' ? 'yes' : 'no';
    case 'free':
      return owners === undefined ? 'yes' : 'broker';
    case 'measurement': case 'status':
      return 'ingest';
    case 'command-answer': case 'device-other':
      return isDeviceOf(party, c) || isAdmin(party) ? 'yes' : 'no';
    case 'ngsi-other':
      return isAdmin(party) ? 'yes' : 'no';
  }
}

/**
 * Whether a subject may name `topic` as the MQTT endpoint of its subscription on the embedded
 * broker: its own notification topics, a dashboard topic no other subject notifies on and, for an
 * administrator, any topic but the system's and the devices'.
 */
export function mayNotifyOn(topic: string, subject: string | undefined, admin: boolean, owners: ReadonlySet<string> | undefined): boolean {
  const c = classifyTopic(topic);
  const othersOwn = owners !== undefined && [...owners].some((o) => o !== subject);
  switch (c.kind) {
    case 'notification':
      return admin || (c.subject !== undefined && c.subject === subject);
    case 'dashboard':
      return admin || (subject !== undefined && !othersOwn);
    case 'free':
      return admin;
    default:
      return false;
  }
}
