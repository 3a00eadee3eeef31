// Query scenarios over 10,000 Meter entities loaded by upsert: by type, by an indexed q, and near
// a point. Each checks its first answer, so a fast wrong answer cannot pass for a fast right one.

import { formatCount } from './format-count.js';
import { haversineMetres } from './geo.js';
import type { BenchRequest } from './load.js';
import { CENTRE, countMetersNear, meterEntity, METER_COUNT } from './meters.js';
import type { Check, Dataset, Scenario } from './scenario-types.js';
import { isRecord } from './json.js';

const UPSERT = '/ngsi-ld/v1/entityOperations/upsert';
const BATCH = 1_000;
const NEAR_METRES = 500;
/** Meters with temperature >= 90: n % 100 in 90…99. */
const HOT_COUNT = METER_COUNT / 10;
const NEAR_COUNT = countMetersNear(NEAR_METRES);

/** Query string with every value URL-encoded (`>=`, `;`, `==`, brackets and commas included). */
function entitiesPath(params: Readonly<Record<string, string>>): string {
  const query = Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `/ngsi-ld/v1/entities?${query}`;
}

export const METERS: Dataset = {
  name: 'meters',
  note:
    `query setup: ${formatCount(METER_COUNT)} Meter entities (${METER_COUNT / BATCH} upserts of ${formatCount(BATCH)}) on a ` +
    `100 x 100 grid 100 m apart around ${CENTRE.join(',')}; temperature = n % 100, so ${formatCount(HOT_COUNT)} match ` +
    `temperature>=90; ${NEAR_COUNT} lie within ${NEAR_METRES} m of the centre`,
  steps: [
    {
      requests: METER_COUNT / BATCH,
      expectStatus: 201,
      request: (n) => {
        const entities = Array.from({ length: BATCH }, (_, i) => meterEntity('Meter', n * BATCH + i));
        return { method: 'POST', path: UPSERT, body: JSON.stringify(entities) };
      },
    },
  ],
};

interface MeterView {
  readonly type: unknown;
  readonly temperature: number | undefined;
  readonly point: readonly number[] | undefined;
}


function viewOf(entity: unknown): MeterView {
  if (!isRecord(entity)) return { type: undefined, temperature: undefined, point: undefined };
  const temperature = isRecord(entity.temperature) && typeof entity.temperature.value === 'number' ? entity.temperature.value : undefined;
  const geometry = isRecord(entity.location) && isRecord(entity.location.value) ? entity.location.value : undefined;
  const coordinates = geometry?.coordinates;
  const point = Array.isArray(coordinates) && coordinates.every((c) => typeof c === 'number') ? coordinates : undefined;
  return { type: entity.type, temperature, point };
}

/** Checks an entity array answer: its length, then each entity; returns the first problem. */
function checkMeters(expected: number, ok: (m: MeterView) => boolean, what: string): Check {
  return (body) => {
    const parsed: unknown = JSON.parse(body);
    if (!Array.isArray(parsed)) return 'the answer is not a JSON array';
    if (parsed.length !== expected) return `expected ${expected} entities, got ${parsed.length}`;
    const bad = parsed.findIndex((e) => !ok(viewOf(e)));
    return bad < 0 ? undefined : `entity ${bad} is not ${what}`;
  };
}

const isMeter = (m: MeterView): boolean => m.type === 'Meter';
const isHot = (m: MeterView): boolean => isMeter(m) && m.temperature !== undefined && m.temperature >= 90;
const isNear = (m: MeterView): boolean => {
  const [lon, lat] = m.point ?? [];
  return isMeter(m) && lon !== undefined && lat !== undefined && haversineMetres(CENTRE[0], CENTRE[1], lon, lat) <= NEAR_METRES;
};

function query(name: string, description: string, params: Record<string, string>, check: Check): Scenario {
  const request: BenchRequest = { method: 'GET', path: entitiesPath(params) };
  return {
    name, group: 'query', description, expectStatus: 200, warmup: 100, measure: { kind: 'rate' },
    dataset: METERS, noteBytes: true, check, request: () => request,
  };
}

export const QUERY_SCENARIOS: readonly Scenario[] = [
  query('query.type', 'GET /entities?type=Meter&limit=100', { type: 'Meter', limit: '100' }, checkMeters(100, isMeter, 'a Meter')),
  query(
    'query.q', 'GET /entities?type=Meter&q=temperature>=90&limit=100',
    { type: 'Meter', q: 'temperature>=90', limit: '100' }, checkMeters(100, isHot, 'a Meter with temperature >= 90'),
  ),
  {
    ...query(
      'query.q-1000', 'GET /entities?type=Meter&q=temperature>=90&limit=1000 (every match)',
      { type: 'Meter', q: 'temperature>=90', limit: '1000' }, checkMeters(HOT_COUNT, isHot, 'a Meter with temperature >= 90'),
    ),
    target: { row: 'p50', atMost: 3 },
  },
  query(
    'query.near', `GET /entities?type=Meter&georel=near;maxDistance==${NEAR_METRES}&geometry=Point&coordinates=[${CENTRE.join(',')}]&limit=100`,
    {
      type: 'Meter', georel: `near;maxDistance==${NEAR_METRES}`, geometry: 'Point',
      coordinates: `[${CENTRE.join(',')}]`, limit: '100',
    },
    checkMeters(NEAR_COUNT, isNear, `a Meter within ${NEAR_METRES} m`),
  ),
];
