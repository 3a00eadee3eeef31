// The gateway the dashboard tests look at: three devices (one with an hour of temperature history
// and a location, one stale), a room with a floor polygon and a weather station, written through the
// public API as any client would; and a valve, an MQTT device that takes a command.

import type { UiBroker } from './support.js';

export const BOILER = 'urn:ngsi-ld:Device:boiler-1';
export const SPARE = 'urn:ngsi-ld:Device:boiler-2';
export const PUMP = 'urn:ngsi-ld:Device:pump-3';
export const ROOM = 'urn:ngsi-ld:Room:plant-room';
/** A subscription whose receiver is never there: its failures show on the health panel. */
export const ALARMS = 'Boiler over 70 °C';
/** Instances of the boiler's temperature in the last hour. */
export const SERIES_LENGTH = 60;

const E = '/ngsi-ld/v1/entities';
const iso = (ms: number): string => new Date(ms).toISOString();

async function expectOk(p: Promise<{ status: number; json: unknown }>, what: string): Promise<void> {
  const res = await p;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`);
}

/** Seeds the entities; `headers` carries a token when authentication is on. */
export async function seedGateway(b: UiBroker, headers: Record<string, string> = {}): Promise<void> {
  const now = Date.now();
  // One instance a minute over the last hour, a slow wave around 62 °C.
  const temperature = Array.from({ length: SERIES_LENGTH }, (_, i) => ({
    type: 'Property', value: Math.round((62 + 4 * Math.sin(i / 6) + (i % 7) * 0.15) * 10) / 10, unitCode: 'CEL',
    observedAt: iso(now - (SERIES_LENGTH - i) * 60_000 + 30_000),
  }));
  await expectOk(b.call('POST', '/ngsi-ld/v1/temporal/entities', {
    id: BOILER, type: 'Device', temperature,
    pressure: [{ type: 'Property', value: 1.8, unitCode: 'BAR', observedAt: iso(now - 60_000) }],
  }, headers), 'boiler history');
  await expectOk(b.call('POST', `${E}/${BOILER}/attrs`, {
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.3889, 52.5169] } },
    isIn: { type: 'Relationship', object: ROOM },
  }, headers), 'boiler attributes');
  await expectOk(b.call('POST', E, {
    id: SPARE, type: 'Device',
    temperature: { type: 'Property', value: 21.4, unitCode: 'CEL', observedAt: iso(now - 90_000) },
    pressure: { type: 'Property', value: 0.4, unitCode: 'BAR', observedAt: iso(now - 90_000) },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.3902, 52.5161] } },
  }, headers), 'spare boiler');
  await expectOk(b.call('POST', E, {
    id: PUMP, type: 'Device',
    temperature: { type: 'Property', value: 35.2, unitCode: 'CEL', observedAt: iso(now - 3 * 3_600_000) },
    connectionStatus: { type: 'Property', value: 'offline', observedAt: iso(now - 3 * 3_600_000) },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.3875, 52.5158] } },
  }, headers), 'stale pump');
  await expectOk(b.call('POST', E, {
    id: ROOM, type: 'Room',
    name: { type: 'Property', value: 'Plant room B1' },
    location: {
      type: 'GeoProperty',
      value: { type: 'Polygon', coordinates: [[[13.3870, 52.5155], [13.3910, 52.5155], [13.3910, 52.5173], [13.3870, 52.5173], [13.3870, 52.5155]]] },
    },
  }, headers), 'room');
  await expectOk(b.call('POST', '/ngsi-ld/v1/subscriptions', {
    type: 'Subscription', subscriptionName: ALARMS, entities: [{ type: 'Device' }], q: 'temperature>70',
    notification: { endpoint: { uri: 'http://127.0.0.1:9/alarms', accept: 'application/json' } },
  }, headers), 'alarm subscription');
}

export const VALVE = 'urn:ngsi-ld:Valve:valve-1';
/** The valve's device id: it receives its commands on ngsi/<tenant>/valve-1/cmd. */
export const VALVE_DEVICE = 'valve-1';

/** Registers the valve (one command, `open`) and writes its entity; `headers`: an administrator's token when authentication is on. */
export async function seedValve(b: UiBroker, headers: Record<string, string> = {}): Promise<void> {
  await expectOk(b.call('POST', '/edgeld/v1/devices', {
    deviceId: VALVE_DEVICE, entityId: VALVE, entityType: 'Valve', commands: [{ name: 'open', expires: 'PT5M' }],
  }, headers), 'valve device');
  await expectOk(b.call('POST', E, { id: VALVE, type: 'Valve', position: { type: 'Property', value: 0, unitCode: 'P1' } }, headers), 'valve');
}
