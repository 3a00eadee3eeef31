// Each writable subscription member from its compact input to the expanded model (NGSI-LD §5.2.12,
// §5.2.14, §5.2.15), with a 400 BadRequestData whose detail names the member at fault.

import {
  BadRequestDataError, NgsiError, PatternSyntaxError, TooComplexQueryError, compileIdPattern, isAbsoluteUri, isLanguagePreference,
  nameProblem, parseDateTime, parseGeoQuery, parseQ, parseScopeQ, parseTypeSelection,
  type GeoQuery, type Iri, type Member, type TermMapper,
} from '../ngsi/index.js';
import type { EndpointInput, EntitySelectorInput, GeoQInput, KeyValueInput, NotificationInput } from './input.js';
import {
  ENDPOINT_SCHEMES, NOTIFICATION_ACCEPTS, NOTIFICATION_FORMATS, NOTIFICATION_TRIGGERS,
  type Endpoint, type EntitySelector, type KeyValuePair, type NotificationParams, type NotificationTrigger,
} from './model.js';

/** A 400 naming the member (dotted path) in its detail. */
export function invalidMember(member: string, why: string, cause?: unknown): BadRequestDataError {
  return new BadRequestDataError(`Invalid subscription member '${member}'`, `${member}: ${why}`, cause === undefined ? undefined : { cause });
}

/** Runs a parser of the ngsi module, re-labelling its errors with the member they concern. */
export function withinMember<T>(member: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof TooComplexQueryError) throw new TooComplexQueryError(err.message, `${member}: ${err.detail ?? err.message}`, { cause: err });
    if (err instanceof PatternSyntaxError) throw invalidMember(member, `invalid regular expression: ${err.message}`, err);
    if (err instanceof NgsiError) {
      const why = err.detail === undefined ? err.message : `${err.message}: ${err.detail}`;
      throw invalidMember(member, why, err);
    }
    throw err;
  }
}

export function parseName(member: string, name: string, mapper: TermMapper): Iri {
  const problem = nameProblem(name);
  if (problem !== undefined) throw invalidMember(member, problem);
  return mapper.expandTerm(name);
}

export function parseNames(member: string, names: readonly string[], mapper: TermMapper): Iri[] {
  if (names.length === 0) throw invalidMember(member, 'must be a non-empty array of attribute names');
  return names.map((n, i) => parseName(`${member}[${i}]`, n, mapper));
}

function parseSelector(sel: EntitySelectorInput, i: number, mapper: TermMapper): EntitySelector {
  const at = `entities[${i}]`;
  if (sel.type === undefined) throw invalidMember(`${at}.type`, 'an EntitySelector needs a type');
  const type = sel.type;
  const out: EntitySelector = { type: withinMember(`${at}.type`, () => parseTypeSelection(type, mapper)) };
  if (sel.id !== undefined) {
    if (!isAbsoluteUri(sel.id)) throw invalidMember(`${at}.id`, `'${sel.id}' is not an absolute URI`);
    out.id = sel.id;
  }
  if (sel.idPattern !== undefined) {
    const pattern = sel.idPattern;
    withinMember(`${at}.idPattern`, () => compileIdPattern(pattern));
    out.idPattern = pattern;
  }
  return out;
}

/** NGSI-LD §5.2.33: a non-empty array of EntitySelector. */
export function parseEntities(entities: readonly EntitySelectorInput[], mapper: TermMapper): EntitySelector[] {
  if (entities.length === 0) throw invalidMember('entities', 'must be a non-empty array of EntitySelector');
  return entities.map((s, i) => parseSelector(s, i, mapper));
}

export function parseTriggers(triggers: readonly string[]): NotificationTrigger[] {
  if (triggers.length === 0) throw invalidMember('notificationTrigger', 'must be a non-empty array');
  return triggers.map((t, i) => {
    const hit = NOTIFICATION_TRIGGERS.find((known) => known === t);
    if (hit === undefined) throw invalidMember(`notificationTrigger[${i}]`, `'${t}' is not one of ${NOTIFICATION_TRIGGERS.join(', ')}`);
    return hit;
  });
}

/** A positive number of seconds (timeInterval, throttling). */
export function parseSeconds(member: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw invalidMember(member, 'must be a number of seconds above 0');
  return value;
}

export function parseExpiresAt(text: string, now: number): number {
  const at = parseDateTime(text);
  if (at === undefined) throw invalidMember('expiresAt', `'${text}' is not an ISO 8601 date-time`);
  if (at <= now) throw invalidMember('expiresAt', `${text} is not in the future`);
  return at;
}

/**
 * A q as a query string carries it: percent-encoded characters are decoded first, as Stellio does
 * with a subscription's q (`name=="Eiffel%20Tower"`); a q that is not valid percent-encoding is
 * taken as written.
 */
function percentDecoded(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export const parseQMember = (text: string, mapper: TermMapper, member = 'q'): ReturnType<typeof parseQ> =>
  withinMember(member, () => parseQ(percentDecoded(text), mapper));
export const parseScopeQMember = (text: string): ReturnType<typeof parseScopeQ> => withinMember('scopeQ', () => parseScopeQ(text));
export const parseGeoQMember = (input: GeoQInput, mapper: TermMapper): GeoQuery => withinMember('geoQ', () => parseGeoQuery(input, mapper));

export function parseLang(lang: string): string {
  if (!isLanguagePreference(lang)) throw invalidMember('lang', `'${lang}' is not a list of language ranges`);
  return lang;
}

export function parseDatasetIds(ids: readonly string[]): string[] {
  if (ids.length === 0) throw invalidMember('datasetId', 'must be a non-empty array');
  ids.forEach((d, i) => {
    if (d !== '@none' && !isAbsoluteUri(d)) throw invalidMember(`datasetId[${i}]`, `'${d}' is neither a URI nor @none`);
  });
  return [...ids];
}

export function parseUri(member: string, uri: string): string {
  if (!isAbsoluteUri(uri)) throw invalidMember(member, `'${uri}' is not an absolute URI`);
  return uri;
}

const MQTT_VERSIONS = ['mqtt3.1.1', 'mqtt5.0'];
const MQTT_QOS = ['0', '1', '2'];

/** RFC 9110 §5.1 field-name: a token (§5.6.2). */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 §5.5 field-value characters: visible ASCII, space, tab and obs-text; never CR, LF or NUL. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * NOTE: receiverInfo pairs become HTTP headers of every notification, and notifierInfo pairs name
 * sender settings: a pair the sender cannot write would fail each delivery, so it is refused here.
 */
function parsePairs(member: string, pairs: readonly KeyValueInput[]): KeyValuePair[] {
  return pairs.map((p, i) => {
    if (p.key.trim() === '') throw invalidMember(`${member}[${i}].key`, 'must not be empty');
    if (!FIELD_NAME.test(p.key)) throw invalidMember(`${member}[${i}].key`, 'must be an HTTP field name (RFC 9110 token: letters, digits, !#$%&\'*+-.^_`|~)');
    if (!FIELD_VALUE.test(p.value)) {
      throw invalidMember(`${member}[${i}].value`, 'must be an HTTP field value: no line breaks, NUL or other control characters');
    }
    if (member.endsWith('notifierInfo') && p.key === 'MQTT-Version' && !MQTT_VERSIONS.includes(p.value)) {
      throw invalidMember(`${member}[${i}].value`, `MQTT-Version must be one of ${MQTT_VERSIONS.join(', ')}`);
    }
    if (member.endsWith('notifierInfo') && p.key === 'MQTT-QoS' && !MQTT_QOS.includes(p.value)) {
      throw invalidMember(`${member}[${i}].value`, `MQTT-QoS must be one of ${MQTT_QOS.join(', ')}`);
    }
    return { key: p.key, value: p.value };
  });
}

function parseEndpointUri(uri: string | undefined): string {
  const member = 'notification.endpoint.uri';
  if (uri === undefined) throw invalidMember(member, 'the endpoint needs a uri');
  let url: URL;
  try {
    url = new URL(uri);
  } catch (err) {
    throw invalidMember(member, `'${uri}' is not an absolute URI`, err);
  }
  const scheme = url.protocol.slice(0, -1);
  if (!(ENDPOINT_SCHEMES as readonly string[]).includes(scheme)) {
    throw invalidMember(member, `scheme '${scheme}' is not one of ${ENDPOINT_SCHEMES.join(', ')}`);
  }
  if (url.hostname === '') throw invalidMember(member, `'${uri}' names no host`);
  return uri;
}

/** NGSI-LD §5.2.15 Endpoint; accept defaults to application/json. */
export function parseEndpoint(input: EndpointInput | undefined): Endpoint {
  if (input === undefined) throw invalidMember('notification.endpoint', 'the notification needs an endpoint');
  const accept = input.accept ?? 'application/json';
  const known = NOTIFICATION_ACCEPTS.find((a) => a === accept);
  if (known === undefined) throw invalidMember('notification.endpoint.accept', `'${accept}' is not one of ${NOTIFICATION_ACCEPTS.join(', ')}`);
  const out: Endpoint = { uri: parseEndpointUri(input.uri), accept: known };
  if (input.timeout !== undefined) {
    if (!Number.isInteger(input.timeout) || input.timeout <= 0) throw invalidMember('notification.endpoint.timeout', 'must be a positive number of milliseconds');
    out.timeout = input.timeout;
  }
  if (input.receiverInfo !== undefined) out.receiverInfo = parsePairs('notification.endpoint.receiverInfo', input.receiverInfo);
  if (input.notifierInfo !== undefined) out.notifierInfo = parsePairs('notification.endpoint.notifierInfo', input.notifierInfo);
  return out;
}

function parseMembers(member: string, names: readonly string[], mapper: TermMapper): Member[] {
  if (names.length === 0) throw invalidMember(member, 'must be a non-empty array of member names');
  return names.map((n, i) => (n === 'id' || n === 'type' ? n : parseName(`${member}[${i}]`, n, mapper)));
}

/** NGSI-LD §5.2.14 NotificationParams. */
export function parseNotification(input: NotificationInput | undefined, mapper: TermMapper): NotificationParams {
  if (input === undefined) throw invalidMember('notification', 'a subscription needs notification parameters');
  const format = input.format ?? 'normalized';
  const knownFormat = NOTIFICATION_FORMATS.find((f) => f === format);
  if (knownFormat === undefined) throw invalidMember('notification.format', `'${format}' is not one of ${NOTIFICATION_FORMATS.join(', ')}`);
  const out: NotificationParams = {
    format: knownFormat, sysAttrs: input.sysAttrs ?? false, showChanges: input.showChanges ?? false, endpoint: parseEndpoint(input.endpoint),
  };
  if (input.attributes !== undefined) out.attributes = parseNames('notification.attributes', input.attributes, mapper);
  if (input.pick !== undefined) out.pick = parseMembers('notification.pick', input.pick, mapper);
  if (input.omit !== undefined) out.omit = parseMembers('notification.omit', input.omit, mapper);
  // NGSI-LD §4.21: a member cannot be both picked and omitted.
  const both = out.pick?.find((m) => out.omit?.includes(m));
  if (both !== undefined) throw invalidMember('notification.pick', `'${mapper.compactIri(both)}' is in both pick and omit`);
  // NGSI-LD §4.21: attributes is the older projection; it does not combine with pick and omit.
  if (out.attributes !== undefined && (out.pick !== undefined || out.omit !== undefined)) {
    throw invalidMember('notification.attributes', 'attributes cannot be combined with pick or omit');
  }
  // NGSI-LD §5.2.14 join, joinLevel (§4.5.23).
  if (input.join !== undefined && input.join !== '@none') {
    if (input.join !== 'inline' && input.join !== 'flat') throw invalidMember('notification.join', `'${input.join}' is not one of inline, flat, @none`);
    out.join = input.join;
  }
  if (input.joinLevel !== undefined) {
    if (!Number.isInteger(input.joinLevel) || input.joinLevel < 1 || input.joinLevel > 10) {
      throw invalidMember('notification.joinLevel', 'must be an integer from 1 to 10');
    }
    if (out.join === undefined) throw invalidMember('notification.joinLevel', 'joinLevel needs join inline or flat');
    out.joinLevel = input.joinLevel;
  }
  // NGSI-LD §5.2.14: previous values have no place in the keyValues representation.
  if (out.showChanges && (out.format === 'keyValues' || out.format === 'simplified')) {
    throw invalidMember('notification.showChanges', `showChanges cannot be used with format ${out.format}`);
  }
  return out;
}
