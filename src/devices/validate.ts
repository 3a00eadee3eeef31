// Checks of a device record's members that need no @context: the device id (an MQTT topic segment),
// entity id and type, the names of renames, unit codes and static attributes, the shape of the context.
// Each failure is BadRequestData naming the member at fault.

import { BadRequestDataError, ENTITY_CORE_MEMBERS, isAbsoluteUri, isPlainObject, nameProblem, parseFixedDuration, type JsonObject } from '../ngsi/index.js';
import type { DeviceCommand, DeviceContext } from '../store/index.js';

/** A topic segment of `ngsi/<tenant>/<deviceId>/attrs`: never `/`, `+` or `#` ([MQTT-4.7.1-1]). */
const DEVICE_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
/** UN/CEFACT Recommendation 20 common codes: 2 or 3 upper-case letters and digits (`CEL`, `P1`). */
const UNIT_CODE = /^[A-Z0-9]{2,3}$/;
/** The payload member of a measurement message that carries its time (edge spec §2), not an attribute. */
const OBSERVED_AT = 'observedAt';

export function invalid(detail: string, cause?: unknown): BadRequestDataError {
  return new BadRequestDataError('Invalid device', detail, cause === undefined ? undefined : { cause });
}

export const isDeviceId = (s: string): boolean => DEVICE_ID.test(s);

export function checkDeviceId(deviceId: string): void {
  if (!isDeviceId(deviceId)) {
    throw invalid(`deviceId: '${deviceId}' is not 1 to 64 letters, digits, '_', '-', '.' or ':'`);
  }
}

export function checkEntityId(entityId: string): void {
  if (!isAbsoluteUri(entityId)) throw invalid(`entityId: '${entityId}' is not an absolute URI`);
}

/** Why a name is no attribute or type name of a device record, or undefined. */
function nameIssue(name: string): string | undefined {
  const problem = nameProblem(name);
  if (problem !== undefined) return problem;
  if (/\s/.test(name)) return `name '${name}' contains whitespace`;
  if (name.startsWith('@')) return `'${name}' is a JSON-LD keyword, not a name`;
  return undefined;
}

/** An attribute name: a valid name that is no entity member (`id`, `type`, `scope`, …). */
function attributeIssue(name: string): string | undefined {
  if (ENTITY_CORE_MEMBERS.has(name)) return `'${name}' is an entity member, not an attribute`;
  return nameIssue(name);
}

export function checkEntityType(entityType: string): void {
  const issue = nameIssue(entityType);
  if (issue !== undefined) throw invalid(`entityType: ${issue}`);
}

export function checkRenames(renames: Readonly<Record<string, string>>): void {
  const targets = new Map<string, string>();
  for (const [key, attr] of Object.entries(renames)) {
    if (key === '') throw invalid('renames: an empty measurement key');
    if (key === OBSERVED_AT) throw invalid(`renames.${key}: '${OBSERVED_AT}' is the time of the measurement, not an attribute`);
    const issue = attributeIssue(attr);
    if (issue !== undefined) throw invalid(`renames.${key}: ${issue}`);
    const other = targets.get(attr);
    if (other !== undefined) throw invalid(`renames: '${other}' and '${key}' both rename to '${attr}'`);
    targets.set(attr, key);
  }
}

export function checkUnitCodes(unitCodes: Readonly<Record<string, string>>): void {
  for (const [attr, code] of Object.entries(unitCodes)) {
    const issue = attributeIssue(attr);
    if (issue !== undefined) throw invalid(`unitCodes: ${issue}`);
    if (!UNIT_CODE.test(code)) throw invalid(`unitCodes.${attr}: '${code}' is not a UN/CEFACT unit code (2 or 3 upper-case letters and digits)`);
  }
}

/**
 * The attribute names, and each value an attribute (an object) or a multi-attribute (a non-empty
 * array of objects). What the members of an attribute may be depends on the context: checked by
 * the caller that resolves it.
 */
export function checkStaticAttributes(attrs: Readonly<JsonObject>): void {
  for (const [name, value] of Object.entries(attrs)) {
    const issue = attributeIssue(name);
    if (issue !== undefined) throw invalid(`staticAttributes: ${issue}`);
    const isAttribute = isPlainObject(value) || (Array.isArray(value) && value.length > 0 && value.every(isPlainObject));
    if (!isAttribute) throw invalid(`staticAttributes.${name}: an attribute is a JSON object (or a non-empty array of them)`);
  }
}

export function checkContext(context: DeviceContext): void {
  const entries = Array.isArray(context) ? context : [context];
  for (const entry of entries) {
    if (typeof entry === 'string' && !isAbsoluteUri(entry)) throw invalid(`context: '${entry}' is not an absolute URL`);
  }
}

/** How long a command stays valid when its declaration gives no `expires` (edge.md §6). */
export const DEFAULT_COMMAND_EXPIRES = 'PT1M';
/** The longest a command may stay valid: P7D. */
const MAX_COMMAND_EXPIRES_MS = 7 * 86_400_000;
/** The attributes that carry a command's state and the device's answer: `<name>_status`, `<name>_info`. */
const STATE_SUFFIXES = ['_status', '_info'];

/**
 * The command declarations: valid attribute names, unique, none the state attribute of another
 * (`<name>_status`, `<name>_info`), each `expires` a fixed ISO 8601 duration above zero, at most P7D.
 */
export function checkCommands(commands: readonly DeviceCommand[]): void {
  const seen = new Set<string>();
  for (const { name, expires } of commands) {
    const issue = attributeIssue(name);
    if (issue !== undefined) throw invalid(`commands: ${issue}`);
    if (seen.has(name)) throw invalid(`commands: '${name}' is declared twice`);
    seen.add(name);
    if (STATE_SUFFIXES.some((s) => name.endsWith(s))) throw invalid(`commands.${name}: names ending in _status or _info carry the state of a command`);
    const ms = parseFixedDuration(expires);
    if (ms === undefined || ms <= 0) throw invalid(`commands.${name}.expires: '${expires}' is not an ISO 8601 duration of weeks, days, hours, minutes or seconds above zero`);
    if (ms > MAX_COMMAND_EXPIRES_MS) throw invalid(`commands.${name}.expires: '${expires}' is longer than P7D`);
  }
}
