// Home Assistant MQTT discovery (pure): the retained config messages of a device's entity (a sensor
// or binary_sensor per measured attribute, a button, number or switch per declared command), the
// JSON state their state topics carry, and the topics of this integration on the embedded broker.

import type { Attribute, Entity, Json, TermMapper } from '../ngsi/index.js';
import { unitOf } from './units.js';

/** Where the gateway keeps its Home Assistant states and listens for Home Assistant's commands. */
export const HOME_ASSISTANT_PREFIX = 'edgeld/ha/';
/** The gateway's own availability: `online` while it runs (retained), `offline` once it stopped. */
export const GATEWAY_STATUS_TOPIC = `${HOME_ASSISTANT_PREFIX}status`;
export const ONLINE = 'online';
export const OFFLINE = 'offline';
/** Who published a config (Home Assistant logs it). */
const ORIGIN = { name: 'edgeld' };
/** What a button press sends (Home Assistant's default payload_press); written as the command's value. */
export const PRESS = 'PRESS';

export interface DiscoveryOptions {
  /** integrations.home-assistant.discovery-prefix. */
  readonly prefix: string;
  /** integrations.home-assistant.node-id. */
  readonly nodeId: string;
}

/** A device as discovery sees it. */
export interface DiscoveredDevice {
  readonly tenant: string;
  readonly deviceId: string;
  readonly entityType: string;
  /** The names of its declared commands. */
  readonly commands: readonly string[];
}

export type CommandComponent = 'button' | 'number' | 'switch';

/** What a device publishes: config topic → payload, its state payload, and the component of each command. */
export interface Discovery {
  readonly configs: ReadonlyMap<string, string>;
  readonly state: string;
  readonly commands: ReadonlyMap<string, CommandComponent>;
  /** What the configs were built from: the same shape, the same configs. */
  readonly shape: string;
}

const tenantSegment = (tenant: string): string => (tenant === '' ? 'default' : tenant);

/** The topic a device's state is kept on (retained JSON, one member per discovered attribute). */
export function stateTopicOf(tenant: string, deviceId: string): string {
  return `${HOME_ASSISTANT_PREFIX}${tenantSegment(tenant)}/${deviceId}/state`;
}

/** The topic Home Assistant sends a command on: `edgeld/ha/<tenant>/<deviceId>/<command, URI-encoded>/set`. */
function commandTopicOf(tenant: string, deviceId: string, command: string): string {
  return `${HOME_ASSISTANT_PREFIX}${tenantSegment(tenant)}/${deviceId}/${encodeURIComponent(command)}/set`;
}

/** The device and command a command topic names (tenant '' for `default`), or undefined for any other topic. */
export function parseCommandTopic(topic: string): { tenantSegment: string; deviceId: string; command: string } | undefined {
  if (!topic.startsWith(HOME_ASSISTANT_PREFIX)) return undefined;
  const parts = topic.slice(HOME_ASSISTANT_PREFIX.length).split('/');
  if (parts.length !== 4 || parts[3] !== 'set' || parts[0] === '' || parts[1] === '' || parts[2] === '') return undefined;
  try {
    return { tenantSegment: parts[0]!, deviceId: parts[1]!, command: decodeURIComponent(parts[2]!) };
  } catch {
    return undefined;
  }
}

/** FNV-1a, 32 bits, as 8 hex digits: tells apart names that read alike once sanitized. */
function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** An id Home Assistant accepts in a discovery topic ([a-zA-Z0-9_-]); a name changed on the way gets a hash of itself. */
function objectIdOf(text: string): string {
  const safe = text.replace(/[^A-Za-z0-9_-]/g, '_');
  return safe === text ? text : `${safe}_${shortHash(text)}`;
}

const configTopic = (o: DiscoveryOptions, component: string, objectId: string): string => `${o.prefix}/${component}/${o.nodeId}/${objectId}/config`;

/** The config of the gateway itself: the device every other one is `via_device` of. */
export function gatewayConfig(o: DiscoveryOptions): { topic: string; payload: string } {
  const payload = {
    name: 'Gateway', unique_id: `${o.nodeId}_gateway`, device_class: 'connectivity', entity_category: 'diagnostic',
    state_topic: GATEWAY_STATUS_TOPIC, payload_on: ONLINE, payload_off: OFFLINE,
    device: { identifiers: [o.nodeId], name: `edgeld ${o.nodeId}`, manufacturer: 'edgeld', model: 'NGSI-LD gateway' },
    origin: ORIGIN,
  };
  return { topic: configTopic(o, 'binary_sensor', 'gateway'), payload: JSON.stringify(payload) };
}

/** The value of an attribute's default instance when it is a Property with a scalar value. */
function scalarOf(instances: readonly Attribute[] | undefined): string | number | boolean | undefined {
  const a = instances?.find((i) => i.datasetId === undefined);
  if (a?.kind !== 'Property') return undefined;
  const v = a.value;
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : undefined;
}

const componentOfCommand = (value: Json | undefined): CommandComponent =>
  typeof value === 'boolean' ? 'switch' : typeof value === 'number' ? 'number' : 'button';

/** One announced attribute or command: what its config is made of (never its value). */
interface Item {
  readonly component: 'sensor' | 'binary_sensor' | CommandComponent;
  readonly name: string;
  /** Of a numeric sensor. */
  readonly unitCode?: string | undefined;
}

/** The items of a device and its state, in one pass over the entity. */
function scan(device: DiscoveredDevice, entity: Entity | undefined, mapper: TermMapper): { items: Item[]; state: Record<string, string | number | boolean> } {
  const items: Item[] = [];
  const state: Record<string, string | number | boolean> = {};
  const commandAttrs = new Set<string>();
  for (const name of device.commands) {
    const attr = mapper.expandTerm(name);
    commandAttrs.add(attr);
    const value = scalarOf(entity?.attrs[attr]);
    const component = componentOfCommand(value);
    items.push({ component, name });
    // NOTE: a switch or number holds a boolean or number (componentOfCommand).
    if (component !== 'button') state[name] = value!;
  }
  for (const [attr, instances] of Object.entries(entity?.attrs ?? {})) {
    if (commandAttrs.has(attr)) continue;
    const value = scalarOf(instances);
    if (value === undefined) continue;
    const name = mapper.compactIri(attr);
    state[name] = value;
    if (typeof value === 'boolean') items.push({ component: 'binary_sensor', name });
    // NOTE: a unit or a device class on a text state makes Home Assistant refuse the state.
    else items.push({ component: 'sensor', name, unitCode: typeof value === 'number' ? instances.find((i) => i.datasetId === undefined)?.unitCode ?? '' : undefined });
  }
  return { items, state };
}

const template = (name: string): string => `value_json[${JSON.stringify(name)}]`;
const onOff = (name: string): Record<string, string> => ({ value_template: `{{ 'ON' if ${template(name)} else 'OFF' }}`, payload_on: 'ON', payload_off: 'OFF' });

/** The members of an item's config proper to its component. */
function membersOf(item: Item, stateTopic: string, commandTopic: string): Record<string, unknown> {
  const { name } = item;
  switch (item.component) {
    case 'button': return { command_topic: commandTopic, payload_press: PRESS };
    case 'switch': return { command_topic: commandTopic, state_topic: stateTopic, ...onOff(name) };
    case 'number': return { command_topic: commandTopic, state_topic: stateTopic, value_template: `{{ ${template(name)} }}`, min: -1e9, max: 1e9, step: 0.01, mode: 'box' };
    case 'binary_sensor': return { state_topic: stateTopic, ...onOff(name) };
    case 'sensor': {
      const unit = item.unitCode === undefined ? undefined : unitOf(item.unitCode, name);
      return {
        state_topic: stateTopic, value_template: `{{ ${template(name)} }}`,
        ...(unit ? { unit_of_measurement: unit.unit } : {}),
        ...(unit?.deviceClass ? { device_class: unit.deviceClass } : {}),
        ...(item.unitCode !== undefined ? { state_class: unit?.stateClass ?? 'measurement' } : {}),
      };
    }
  }
}

/**
 * Builds the configs of one device (no entity yet: its commands only, as buttons) and its state.
 * The configs of `previous` are kept when the device announces the same items (only values changed).
 */
export function discoveryOf(o: DiscoveryOptions, device: DiscoveredDevice, entity: Entity | undefined, mapper: TermMapper, previous?: Discovery): Discovery {
  const { items, state } = scan(device, entity, mapper);
  const shape = JSON.stringify([device.entityType, items]);
  if (previous !== undefined && previous.shape === shape) return { ...previous, state: JSON.stringify(state) };
  const seg = tenantSegment(device.tenant);
  const stateTopic = stateTopicOf(device.tenant, device.deviceId);
  const common = {
    availability: [
      { topic: `ngsi/${seg}/${device.deviceId}/status`, payload_available: ONLINE, payload_not_available: OFFLINE },
      { topic: GATEWAY_STATUS_TOPIC, payload_available: ONLINE, payload_not_available: OFFLINE },
    ],
    availability_mode: 'all',
    device: {
      identifiers: [`${o.nodeId}_${objectIdOf(`${seg}_${device.deviceId}`)}`], name: device.deviceId, manufacturer: 'edgeld',
      model: device.entityType, via_device: o.nodeId,
    },
    origin: ORIGIN,
  };
  const configs = new Map<string, string>();
  const commands = new Map<string, CommandComponent>();
  for (const item of items) {
    const objectId = objectIdOf(`${seg}_${device.deviceId}_${item.name}`);
    const members = membersOf(item, stateTopic, commandTopicOf(device.tenant, device.deviceId, item.name));
    configs.set(configTopic(o, item.component, objectId), JSON.stringify({ name: item.name, unique_id: `${o.nodeId}_${objectId}`, ...members, ...common }));
    if (item.component === 'button' || item.component === 'switch' || item.component === 'number') commands.set(item.name, item.component);
  }
  return { configs, state: JSON.stringify(state), commands, shape };
}
