// Temporal API fixtures: a sensor written through the API with a moving clock (observed and
// unobserved instances, an attribute created and deleted, a back-fill), and an independent oracle
// over the stored history for any time property and timerel.

import { expect } from 'vitest';
import type { HistoryInstance } from '../../../src/store/index.js';
import { T0, type TestBroker } from '../../helpers/broker.js';

export const DEFAULT_VOCAB = 'https://uri.etsi.org/ngsi-ld/default-context/';
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const O0 = Date.parse('2026-04-01T00:00:00.000Z');
export const iso = (ms: number): string => new Date(ms).toISOString();
export const TP = '/ngsi-ld/v1/temporal/entities';

/** Every write of the sensor fixture happens at T0 + k × 6 h; observedAt of step k is O0 + k × 12 h. */
export const STEP = 6 * HOUR;

export async function ok(p: Promise<{ status: number; text: string }>, status = 204): Promise<void> {
  const res = await p;
  expect(res.status, res.text).toBe(status);
}

/**
 * urn:ngsi-ld:Sensor:f1 — temperature (observed), humidity (never observed), power (created at step 4,
 * deleted at step 9), and at step 10 a back-filled temperature instance from before everything else.
 */
export async function writeSensor(b: TestBroker, id = 'urn:ngsi-ld:Sensor:f1', type = 'Sensor'): Promise<void> {
  b.clock.set(T0);
  await ok(b.request('POST', '/ngsi-ld/v1/entities', {
    body: {
      id, type,
      temperature: { type: 'Property', value: 20, observedAt: iso(O0), unitCode: 'CEL' },
      humidity: { type: 'Property', value: 50 },
    },
  }), 201);
  for (let k = 1; k <= 12; k++) {
    b.clock.set(T0 + k * STEP);
    await ok(b.request('PATCH', `/ngsi-ld/v1/entities/${id}/attrs`, {
      body: { temperature: { type: 'Property', value: 20 + k, observedAt: iso(O0 + k * 12 * HOUR) }, humidity: { type: 'Property', value: 50 + k } },
    }));
    if (k === 4) await ok(b.request('POST', `/ngsi-ld/v1/entities/${id}/attrs`, { body: { power: { type: 'Property', value: 'on' } } }));
    if (k === 9) await ok(b.request('DELETE', `/ngsi-ld/v1/entities/${id}/attrs/power`));
    if (k === 10) {
      await ok(b.request('POST', `${TP}/${id}/attrs`, {
        body: { temperature: [{ type: 'Property', value: 5, observedAt: iso(O0 - DAY) }] },
      }));
    }
  }
}

type TimeProp = 'observedAt' | 'createdAt' | 'modifiedAt' | 'deletedAt';

export const timeOf = (i: HistoryInstance, tp: TimeProp): number | undefined =>
  (tp === 'observedAt' ? i.observedAt : tp === 'createdAt' ? i.createdAt : tp === 'modifiedAt' ? i.modifiedAt : i.deletedAt);

/** Instance ids of one attribute the stored history holds for a timerel, oldest first (independent of the read path). */
export function expectedIds(
  b: TestBroker, id: string, attr: string, tp: TimeProp, timerel?: 'before' | 'after' | 'between', timeAt?: number, endTimeAt?: number,
): string[] {
  return b.broker.store.history.listForEntity({ tenant: '' }, id, DEFAULT_VOCAB + attr).flatMap((i) => {
    const t = timeOf(i, tp);
    if (t === undefined) return [];
    if (timerel === 'before' && !(t < timeAt!)) return [];
    if (timerel === 'after' && !(t >= timeAt!)) return [];
    if (timerel === 'between' && !(t >= timeAt! && t < endTimeAt!)) return [];
    return [{ t, id: i.instanceId }];
  }).sort((a, b2) => a.t - b2.t).map((x) => x.id);
}

/** The instanceIds of an attribute in a normalized temporal entity (always an array). */
export function idsOf(entity: Record<string, unknown>, attr: string): string[] {
  const value = entity[attr];
  if (value === undefined) return [];
  expect(Array.isArray(value), `${attr} is an array of instances`).toBe(true);
  return (value as Array<{ instanceId: string }>).map((i) => i.instanceId);
}
