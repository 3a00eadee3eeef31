// The page's pure parts, run in Node: Prometheus text parsing, the temporal questions and series,
// the fitted map projection, how entities, values and notifications are read, and the commands card's
// answer, typed value and bounded refresh.

import { describe, expect, it, vi } from 'vitest';
import { boundedRefresh, parseCommandValue, readEntityCommands } from '../../ui/commands.js';
import {
  attributesOf, entitiesOfMessage, formatAge, formatValue, idContainsPattern, newestObservedAt, numericValue, type Entity,
} from '../../ui/format.js';
import { fitGeometries, graticule, gridStep } from '../../ui/geo.js';
import { metricValue, parseMetrics } from '../../ui/metrics.js';
import { seriesOf, temporalParams } from '../../ui/temporal.js';

describe('parseMetrics', () => {
  const text = [
    '# HELP edgeld_mqtt_connected_clients clients',
    '# TYPE edgeld_mqtt_connected_clients gauge',
    'edgeld_mqtt_connected_clients 3',
    'edgeld_mqtt_measurements_dropped_total{reason="topic"} 2',
    'edgeld_mqtt_measurements_dropped_total{reason="not-json"} 5',
    'edgeld_http_requests_total{method="GET",route="/a\\"b",status="200"} 7 1700000000000',
    'nodejs_eventloop_lag_seconds +Inf',
    'garbage line without value',
    '',
  ].join('\n');

  it('reads samples with labels, escapes, timestamps and special values', () => {
    const samples = parseMetrics(text);
    expect(samples).toHaveLength(5);
    expect(metricValue(samples, 'edgeld_mqtt_connected_clients')).toBe(3);
    expect(metricValue(samples, 'edgeld_http_requests_total', { route: '/a"b' })).toBe(7);
    expect(metricValue(samples, 'nodejs_eventloop_lag_seconds')).toBe(Infinity);
  });

  it('sums the samples that match the labels given, and is undefined for an absent metric', () => {
    const samples = parseMetrics(text);
    expect(metricValue(samples, 'edgeld_mqtt_measurements_dropped_total')).toBe(7);
    expect(metricValue(samples, 'edgeld_mqtt_measurements_dropped_total', { reason: 'topic' })).toBe(2);
    expect(metricValue(samples, 'edgeld_federation_outbox_depth')).toBeUndefined();
  });
});

describe('temporalParams', () => {
  const now = Date.parse('2026-05-01T12:00:00Z');

  it('asks for raw instances of the last hour', () => {
    expect(temporalParams('1h', 'temperature', now)).toEqual({
      timerel: 'after', timeAt: '2026-05-01T11:00:00.000Z', attrs: 'temperature', format: 'temporalValues',
    });
  });

  it('asks for averages per minute over a day and per hour over 30 days', () => {
    expect(temporalParams('24h', 't', now)).toEqual({
      timerel: 'after', timeAt: '2026-04-30T12:00:00.000Z', attrs: 't', format: 'aggregatedValues', aggrMethods: 'avg', aggrPeriodDuration: 'PT1M',
    });
    expect(temporalParams('30d', 't', now)).toMatchObject({ timeAt: '2026-04-01T12:00:00.000Z', aggrPeriodDuration: 'PT1H' });
  });
});

describe('seriesOf', () => {
  it('reads temporalValues in time order, skipping what is not a number', () => {
    const body = { id: 'x', temperature: { type: 'Property', values: [[2, '2026-05-01T10:01:00Z'], [1, '2026-05-01T10:00:00Z'], ['a', '2026-05-01T10:02:00Z'], [3, 'bad']] } };
    expect(seriesOf(body, 'temperature')).toEqual({ xs: [Date.parse('2026-05-01T10:00:00Z') / 1000, Date.parse('2026-05-01T10:01:00Z') / 1000], ys: [1, 2] });
  });

  it('reads the avg of aggregatedValues at the start of each period, an empty period as a gap', () => {
    const body = { t: { type: 'Property', avg: [[5, '2026-05-01T10:00:00Z', '2026-05-01T10:01:00Z'], [null, '2026-05-01T10:01:00Z', '2026-05-01T10:02:00Z']] } };
    expect(seriesOf(body, 't').ys).toEqual([5, null]);
  });

  it('takes the default instance of a multi-attribute, and nothing from a body without the attribute', () => {
    const body = { t: [{ type: 'Property', datasetId: 'urn:a', values: [[9, '2026-05-01T10:00:00Z']] }, { type: 'Property', values: [[1, '2026-05-01T10:00:00Z']] }] };
    expect(seriesOf(body, 't').ys).toEqual([1]);
    expect(seriesOf({}, 't')).toEqual({ xs: [], ys: [] });
    expect(seriesOf(null, 't')).toEqual({ xs: [], ys: [] });
  });
});

describe('fitGeometries', () => {
  it('fits points, lines and polygons into the box with north up', () => {
    const fitted = fitGeometries([
      { type: 'Point', coordinates: [13.0, 52.0] },
      { type: 'LineString', coordinates: [[13.0, 52.0], [13.1, 52.1]] },
      { type: 'Polygon', coordinates: [[[13.0, 52.0], [13.1, 52.0], [13.1, 52.1], [13.0, 52.0]]] },
    ], 600, 20);
    expect(fitted).toBeDefined();
    const f = fitted!;
    expect(f.shapes.map((s) => s.kind)).toEqual(['point', 'line', 'polygon']);
    for (const s of f.shapes) {
      for (const [x, y] of [...s.d.matchAll(/[ML](-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])])) {
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(600);
        expect(y).toBeGreaterThanOrEqual(0);
        expect(y).toBeLessThanOrEqual(f.height);
      }
    }
    expect(f.shapes[2]?.d.endsWith('Z')).toBe(true);
    // North is up: a point further north is drawn higher.
    const [, south] = f.project(13.05, 52.0);
    const [, north] = f.project(13.05, 52.1);
    expect(north).toBeLessThan(south);
  });

  it('shrinks longitudes by the cosine of the latitude, so a square on the ground looks square', () => {
    const f = fitGeometries([{ type: 'MultiPoint', coordinates: [[10, 60], [12, 61]] }], 1000, 0, 1000)!;
    const [x0, y0] = f.project(10, 60);
    const [x1, y1] = f.project(12, 61);
    expect(Math.abs(x1 - x0) / Math.abs(y1 - y0)).toBeCloseTo(2 * Math.cos((60.5 * Math.PI) / 180), 1);
  });

  it('gives a single point a neighbourhood, and nothing for what is not a geometry', () => {
    const f = fitGeometries([{ type: 'Point', coordinates: [8.5, 47.4] }])!;
    expect(f.bounds.east - f.bounds.west).toBeGreaterThan(0);
    expect(fitGeometries([null, 'x', { type: 'Point', coordinates: ['a', 1] }, { type: 'Nope' }])).toBeUndefined();
  });

  it('draws a graticule at round degrees inside the bounds', () => {
    expect(gridStep(0.01)).toBe(0.005);
    expect(gridStep(3)).toBe(1);
    const f = fitGeometries([{ type: 'MultiPoint', coordinates: [[13.38, 52.51], [13.40, 52.52]] }])!;
    const { meridians, parallels } = graticule(f);
    expect(meridians.length).toBeGreaterThan(0);
    for (const m of meridians) expect(m.lon).toBeGreaterThanOrEqual(f.bounds.west);
    for (const p of parallels) expect(p.lat).toBeLessThanOrEqual(f.bounds.north);
  });
});

describe('entities and values', () => {
  const entity: Entity = {
    id: 'urn:ngsi-ld:Device:1', type: 'Device',
    temperature: { type: 'Property', value: 21.456, unitCode: 'CEL', observedAt: '2026-05-01T10:00:00Z' },
    speed: [{ type: 'Property', value: 3, datasetId: 'urn:a', observedAt: '2026-05-01T11:00:00Z' }, { type: 'Property', value: 4 }],
    owner: { type: 'Relationship', object: 'urn:ngsi-ld:Person:1' },
    location: { type: 'GeoProperty', value: { type: 'Point', coordinates: [13.4, 52.5] } },
    createdAt: '2026-05-01T09:00:00Z',
  };

  it('lists attributes with their instances, not the entity members', () => {
    expect(attributesOf(entity).map((a) => [a.name, a.instances.length])).toEqual([['location', 1], ['owner', 1], ['speed', 2], ['temperature', 1]]);
    expect(newestObservedAt(entity)).toBe(Date.parse('2026-05-01T11:00:00Z'));
  });

  it('shows values briefly, with the unit symbol', () => {
    const [location, owner, , temperature] = attributesOf(entity).map((a) => a.instances[0]!);
    expect(formatValue(temperature!)).toBe('21.46°C');
    expect(formatValue(owner!)).toBe('urn:ngsi-ld:Person:1');
    expect(formatValue(location!)).toBe('Point 13.40000, 52.50000');
    expect(formatValue({ type: 'Property', value: 0.4, unitCode: 'BAR' })).toBe('0.4 bar');
    expect(formatValue({ type: 'Property', value: 'x'.repeat(200) }).length).toBeLessThanOrEqual(80);
    expect(numericValue({ type: 'Property', value: 'a' })).toBeUndefined();
    expect(formatAge(42_000)).toBe('42 s');
    expect(formatAge(3 * 3_600_000 + 5)).toBe('3 h');
  });

  it('reads the entities of an MQTT notification message and ignores anything else', () => {
    const body = { id: 'urn:n', type: 'Notification', data: [{ id: 'urn:a', type: 'T' }, 'junk'] };
    expect(entitiesOfMessage(JSON.stringify({ metadata: {}, body })).map((e) => e.id)).toEqual(['urn:a']);
    expect(entitiesOfMessage(JSON.stringify(body)).map((e) => e.id)).toEqual(['urn:a']);
    expect(entitiesOfMessage('not json')).toEqual([]);
    expect(entitiesOfMessage('{"body":{"data":7}}')).toEqual([]);
  });

  it('turns an id fragment into an idPattern that matches it literally', () => {
    const re = new RegExp(`^${idContainsPattern('a.b(1)')}$`);
    expect(re.test('urn:x:a.b(1):y')).toBe(true);
    expect(re.test('urn:x:axb(1)')).toBe(false);
  });
});

describe('the commands card', () => {
  it('takes JSON as JSON and a bare word as a string, and refuses the rest', () => {
    expect(parseCommandValue(' 42 ')).toEqual({ value: 42 });
    expect(parseCommandValue('{"to": 50}')).toEqual({ value: { to: 50 } });
    expect(parseCommandValue('"two words"')).toEqual({ value: 'two words' });
    expect(parseCommandValue('true')).toEqual({ value: true });
    expect(parseCommandValue('open')).toEqual({ value: 'open' });
    expect(parseCommandValue('half open')).toHaveProperty('error');
    expect(parseCommandValue('{oops')).toHaveProperty('error');
    expect(parseCommandValue('   ')).toHaveProperty('error');
  });

  it('reads the answer of GET /edgeld/v1/commands, and nothing of another shape', () => {
    const answer = {
      entityId: 'urn:x:1', deviceId: 'd1', writable: false, commands: [{ name: 'open', expires: 'PT1M' }, { name: 3 }],
      recent: [{ id: 'c1', name: 'open', value: 1, state: 'OK', issuedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:01:00.000Z' }, { id: 'c2' }],
    };
    const read = readEntityCommands(answer);
    expect(read?.commands).toEqual([{ name: 'open', expires: 'PT1M' }]);
    expect(read?.recent.map((r) => r.id)).toEqual(['c1']);
    expect(read?.writable).toBe(false);
    expect(readEntityCommands({ ...answer, writable: 'yes' })).toBeUndefined();
    expect(readEntityCommands([answer])).toBeUndefined();
  });

  it('refreshes at once, then at most once a second however often asked', () => {
    vi.useFakeTimers();
    try {
      let runs = 0;
      const refresh = boundedRefresh(() => runs++, 1000, () => Date.now());
      refresh.request();
      expect(runs).toBe(1);
      for (let i = 0; i < 10; i++) refresh.request();
      expect(runs).toBe(1);
      vi.advanceTimersByTime(999);
      expect(runs).toBe(1);
      vi.advanceTimersByTime(1);
      expect(runs).toBe(2);
      refresh.request();
      refresh.cancel();
      vi.advanceTimersByTime(5000);
      expect(runs).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
