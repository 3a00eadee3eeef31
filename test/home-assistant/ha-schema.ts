// Home Assistant's MQTT discovery schemas, mirrored in zod for the components edgeld publishes.
// Source: home-assistant/core, homeassistant/components/mqtt/: schemas.py / entity.py
// (MQTT_ENTITY_COMMON_SCHEMA, MQTT_AVAILABILITY_SCHEMA, MQTT_ENTITY_DEVICE_INFO_SCHEMA with
// validate_device_has_at_least_one_identifier, MQTT_ORIGIN_INFO_SCHEMA), config.py (MQTT_BASE_SCHEMA,
// MQTT_RO_SCHEMA, MQTT_RW_SCHEMA), sensor.py, binary_sensor.py, button.py, number.py, switch.py
// (each PLATFORM_SCHEMA_MODERN / DISCOVERY_SCHEMA), discovery.py (the topic: <prefix>/<component>/
// [<node_id>/]<object_id>/config, ids of [a-zA-Z0-9_-]+), and homeassistant/components/sensor/const.py
// (DEVICE_CLASS_UNITS, DEVICE_CLASS_STATE_CLASSES). Home Assistant drops unknown keys of a discovery
// payload silently; these schemas are strict instead, so that a misspelt key fails here.

import { z } from 'zod';

/** valid_subscribe_topic / valid_publish_topic: UTF-8, no NUL, 1 to 65535 bytes; wildcards only in filters. */
const publishTopic = z.string().min(1).max(65_535).refine((t) => !/[#+\u0000]/.test(t), 'no wildcard in a publish topic');
const subscribeTopic = z.string().min(1).max(65_535).refine((t) => !t.includes('\u0000'));
/** cv.template: a string (rendered by Jinja; checked against the state payload in the test). */
const template = z.string().min(1);
const qos = z.union([z.literal(0), z.literal(1), z.literal(2)]);

const device = z.strictObject({
  identifiers: z.union([z.string(), z.array(z.string())]).optional(),
  connections: z.array(z.tuple([z.string(), z.string()])).optional(),
  manufacturer: z.string().optional(),
  model: z.string().optional(),
  model_id: z.string().optional(),
  name: z.string().optional(),
  hw_version: z.string().optional(),
  serial_number: z.string().optional(),
  sw_version: z.string().optional(),
  via_device: z.string().optional(),
  suggested_area: z.string().optional(),
  configuration_url: z.string().url().optional(),
}).refine((d) => (Array.isArray(d.identifiers) ? d.identifiers.length > 0 : d.identifiers !== undefined) || (d.connections?.length ?? 0) > 0,
  "Device must have at least one identifying value in 'identifiers' and/or 'connections'");

const origin = z.strictObject({ name: z.string(), sw_version: z.string().optional(), support_url: z.string().url().optional() });

const availabilityEntry = z.strictObject({
  topic: subscribeTopic, payload_available: z.string().optional(), payload_not_available: z.string().optional(), value_template: template.optional(),
});

/** MQTT_ENTITY_COMMON_SCHEMA with MQTT_AVAILABILITY_SCHEMA and MQTT_BASE_SCHEMA's keys. */
const common = {
  availability: z.array(availabilityEntry).optional(),
  availability_mode: z.enum(['all', 'any', 'latest']).optional(),
  availability_topic: subscribeTopic.optional(),
  availability_template: template.optional(),
  payload_available: z.string().optional(),
  payload_not_available: z.string().optional(),
  device: device.optional(),
  origin: origin.optional(),
  enabled_by_default: z.boolean().optional(),
  entity_category: z.enum(['config', 'diagnostic']).optional(),
  entity_picture: z.string().url().optional(),
  icon: z.string().regex(/^[a-z0-9-]+:[a-z0-9-]+$/).optional(),
  json_attributes_topic: subscribeTopic.optional(),
  json_attributes_template: template.optional(),
  object_id: z.string().optional(),
  default_entity_id: z.string().optional(),
  unique_id: z.string().optional(),
  qos: qos.optional(),
  encoding: z.string().optional(),
  name: z.string().nullable().optional(),
};

const withAvailabilityRule = <T extends z.ZodType<{ availability?: unknown; availability_topic?: unknown }>>(s: T) =>
  s.refine((c) => c.availability === undefined || c.availability_topic === undefined, 'availability and availability_topic are exclusive');

/** DEVICE_CLASS_UNITS of the classes a sensor may get (sensor/const.py). */
export const DEVICE_CLASS_UNITS: Readonly<Record<string, readonly string[]>> = {
  temperature: ['°C', '°F', 'K'],
  humidity: ['%'],
  battery: ['%'],
  power: ['mW', 'W', 'kW', 'MW', 'GW', 'TW', 'BTU/h'],
  energy: ['J', 'kJ', 'MJ', 'GJ', 'mWh', 'Wh', 'kWh', 'MWh', 'GWh', 'TWh', 'cal', 'kcal', 'Mcal', 'Gcal'],
  voltage: ['µV', 'mV', 'V', 'kV', 'MV'],
  current: ['mA', 'A'],
  pressure: ['Pa', 'hPa', 'kPa', 'bar', 'cbar', 'mbar', 'mmHg', 'inHg', 'psi'],
  illuminance: ['lx'],
  frequency: ['Hz', 'kHz', 'MHz', 'GHz'],
  distance: ['km', 'm', 'cm', 'mm', 'mi', 'nmi', 'yd', 'in', 'ft'],
  speed: ['mm/d', 'in/d', 'm/s', 'in/h', 'km/h', 'kn', 'mph', 'mm/h', 'mm/s', 'ft/s'],
  weight: ['kg', 'g', 'mg', 'µg', 'oz', 'lb', 'st'],
  volume: ['L', 'mL', 'gal', 'fl. oz.', 'm³', 'ft³', 'CCF'],
  duration: ['d', 'h', 'min', 's', 'ms', 'µs'],
};
/** DEVICE_CLASS_STATE_CLASSES where not every state class is allowed. */
const ENERGY_STATE_CLASSES = ['total', 'total_increasing'];

const sensor = withAvailabilityRule(z.strictObject({
  ...common,
  state_topic: subscribeTopic,
  value_template: template.optional(),
  device_class: z.enum(Object.keys(DEVICE_CLASS_UNITS) as [string, ...string[]]).nullable().optional(),
  expire_after: z.number().int().positive().optional(),
  force_update: z.boolean().optional(),
  last_reset_value_template: template.optional(),
  options: z.array(z.string()).optional(),
  suggested_display_precision: z.number().int().nonnegative().optional(),
  state_class: z.enum(['measurement', 'measurement_angle', 'total', 'total_increasing']).nullable().optional(),
  unit_of_measurement: z.string().nullable().optional(),
})).refine((c) => c.device_class == null || (c.unit_of_measurement != null && DEVICE_CLASS_UNITS[c.device_class]!.includes(c.unit_of_measurement)),
  'the unit of measurement is not one of its device class').refine((c) => c.device_class !== 'energy' || ENERGY_STATE_CLASSES.includes(c.state_class ?? ''),
  'an energy sensor is a total');

const binarySensor = withAvailabilityRule(z.strictObject({
  ...common,
  state_topic: subscribeTopic,
  value_template: template.optional(),
  device_class: z.string().nullable().optional(),
  expire_after: z.number().int().positive().optional(),
  force_update: z.boolean().optional(),
  off_delay: z.number().int().positive().optional(),
  payload_on: z.string().optional(),
  payload_off: z.string().optional(),
}));

const button = withAvailabilityRule(z.strictObject({
  ...common,
  command_topic: publishTopic,
  command_template: template.optional(),
  device_class: z.enum(['identify', 'restart', 'update']).nullable().optional(),
  payload_press: z.string().optional(),
  retain: z.boolean().optional(),
}));

/** MQTT_RW_SCHEMA. */
const readWrite = { command_topic: publishTopic, optimistic: z.boolean().optional(), retain: z.boolean().optional(), state_topic: subscribeTopic.optional() };

const number = withAvailabilityRule(z.strictObject({
  ...common,
  ...readWrite,
  command_template: template.optional(),
  device_class: z.string().nullable().optional(),
  max: z.number().optional(),
  min: z.number().optional(),
  mode: z.enum(['auto', 'box', 'slider']).optional(),
  payload_reset: z.string().optional(),
  step: z.number().min(1e-3).optional(),
  unit_of_measurement: z.string().nullable().optional(),
  value_template: template.optional(),
})).refine((c) => (c.min ?? 1) < (c.max ?? 100), "'min' must be less than 'max'");

const switchSchema = withAvailabilityRule(z.strictObject({
  ...common,
  ...readWrite,
  command_template: template.optional(),
  device_class: z.enum(['outlet', 'switch']).nullable().optional(),
  payload_on: z.string().optional(),
  payload_off: z.string().optional(),
  state_on: z.string().optional(),
  state_off: z.string().optional(),
  value_template: template.optional(),
}));

/** The schema of each component edgeld publishes. */
export const COMPONENT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  sensor, binary_sensor: binarySensor, button, number, switch: switchSchema,
};

/** discovery.py's TOPIC_MATCHER: <prefix>/<component>/[<node_id>/]<object_id>/config. */
export const DISCOVERY_TOPIC = /^(?<prefix>\w[\w/-]*?)\/(?<component>\w+)\/(?:(?<node>[a-zA-Z0-9_-]+)\/)?(?<object>[a-zA-Z0-9_-]+)\/config$/;
