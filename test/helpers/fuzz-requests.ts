// fast-check arbitraries of HTTP requests to the NGSI-LD API: every route, semi-valid and malformed
// query strings, headers and bodies, built around a few seeded entities so requests hit real data.

import fc from 'fast-check';

export const SEED_IDS = ['urn:ngsi-ld:Sensor:s1', 'urn:ngsi-ld:Sensor:s2', 'urn:ngsi-ld:Room:r1'];
const CORE = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.9.jsonld';

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Any text, as well-formed Unicode (a lone surrogate cannot go into a URL). */
const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const ascii = fc.string({ unit: 'binary-ascii', maxLength: 40 });
const junk = fc.oneof(text, ascii, fc.constantFrom('', ' ', '%', '%zz', '..', '/', '\\', '*', 'null', 'undefined', '"', "'", '<x>'));

const id = fc.oneof(
  fc.constantFrom(...SEED_IDS),
  text.map((s) => `urn:ngsi-ld:Sensor:${s}`),
  fc.constantFrom('urn:x:€', 'urn:x:🌡️', 'not a uri', 'urn:ngsi-ld:null', 'http://a/b?c#d'),
  junk,
);
const attr = fc.oneof(fc.constantFrom('temperature', 'name', 'location', 'scope', 'type', 'id', '@context', 'a.b', 'x[y]'), junk);
const typeName = fc.oneof(fc.constantFrom('Sensor', 'Room', 'Sensor,Room', 'Sensor;Room', '(Sensor|Room)', '*', 'type'), junk);

/** Values for query parameters: what each parameter takes, near misses, and junk. */
const PARAM_VALUES: Record<string, fc.Arbitrary<string>> = {
  type: typeName,
  id: fc.oneof(id, fc.constant(SEED_IDS.join(','))),
  idPattern: fc.oneof(fc.constantFrom('^urn:', '.*', '(a+)+$', '(?=x)', '[', '\\1', '(?i)SENSOR'), junk),
  attrs: fc.oneof(attr, fc.constant('temperature,name')),
  pick: fc.oneof(fc.constantFrom('id,type', 'temperature', 'locatedAt{name}', '{', 'a{b{c}}'), junk),
  omit: fc.oneof(fc.constantFrom('id', 'temperature,name'), junk),
  q: fc.oneof(fc.constantFrom('temperature>20', 'name~="(a+)+$"', 'a==1|b==2;(c!=3)', 'temperature==20..30',
    'name=="x', 'a[b.c]==1', 'temperature.observedAt>2020-01-01T00:00:00Z', '((((((', 'a==', ';', '!a'), junk),
  scopeQ: fc.oneof(fc.constantFrom('/A', '/A/#', '/+/B', '/A;/B,/C', '//'), junk),
  georel: fc.oneof(fc.constantFrom('near;maxDistance==100', 'near;minDistance==x', 'within', 'intersects', 'equals', 'near'), junk),
  geometry: fc.oneof(fc.constantFrom('Point', 'Polygon', 'LineString', 'MultiPolygon', 'Circle'), junk),
  coordinates: fc.oneof(fc.constantFrom('[13.4,52.5]', '[[[0,0],[1,0],[1,1],[0,0]]]', '[[[0,0],[1,0]]]', '[999,999]', '[[[[[[[[1]]]]]]]]', '['), junk),
  geoproperty: fc.oneof(fc.constantFrom('location', 'observationSpace'), junk),
  limit: fc.oneof(fc.integer({ min: -5, max: 2000 }).map(String), junk),
  offset: fc.oneof(fc.integer({ min: -5, max: 100 }).map(String), junk),
  count: fc.constantFrom('true', 'false', 'yes', ''),
  options: fc.constantFrom('keyValues', 'sysAttrs', 'concise', 'noOverwrite', 'replace', 'update', 'temporalValues', 'audit', 'x'),
  format: fc.constantFrom('simplified', 'normalized', 'concise', 'temporalValues', 'aggregatedValues', 'x'),
  lang: fc.constantFrom('en', 'fr,en;q=0.8', '*', '@none', 'x-!!'),
  timerel: fc.constantFrom('before', 'after', 'between', 'x'),
  timeAt: fc.constantFrom('2026-01-01T00:00:00Z', '2026-13-01', 'x', ''),
  endTimeAt: fc.constantFrom('2027-01-01T00:00:00Z', 'x'),
  timeproperty: fc.constantFrom('observedAt', 'createdAt', 'modifiedAt', 'x'),
  lastN: fc.oneof(fc.integer({ min: -1, max: 5000 }).map(String), junk),
  aggrMethods: fc.constantFrom('avg', 'min,max,sum', 'totalCount', 'x'),
  aggrPeriodDuration: fc.constantFrom('PT1H', 'P1D', 'PT0S', 'x'),
  datasetId: fc.oneof(fc.constantFrom('urn:ds:1'), junk),
  deleteAll: fc.constantFrom('true', 'false', 'x'),
  details: fc.constantFrom('true', 'false', 'x'),
  join: fc.constantFrom('inline', 'flat', '@none', 'x'),
  joinLevel: fc.constantFrom('1', '2', '0', '-1', 'x'),
  local: fc.constantFrom('true', 'false'),
  orderBy: fc.oneof(fc.constantFrom('id', 'name;desc', 'type;asc,name.sub;desc', 'createdAt', 'temperature.observedAt', 'name;up', ',', 'a.b.c.d'), junk),
  keep: attr,
  drop: attr,
  kind: fc.constantFrom('Hosted', 'Cached', 'ImplicitlyCreated', 'x'),
  reload: fc.constantFrom('true', 'x'),
  unknownParam: junk,
};

const query = fc.uniqueArray(fc.constantFrom(...Object.keys(PARAM_VALUES)), { maxLength: 5 })
  .chain((names) => fc.tuple(...names.map((n) => PARAM_VALUES[n]!.map((v) => `${n}=${encodeURIComponent(v)}`))))
  .chain((pairs) => fc.oneof(
    fc.constant(pairs.length === 0 ? '' : `?${pairs.join('&')}`),
    // raw, unencoded and repeated forms
    fc.constant(pairs.length === 0 ? '?' : `?${pairs.join('&')}&${pairs[0]}`),
    ascii.map((s) => `?${s}`),
  ));

const seg = (a: fc.Arbitrary<string>) => a.map((s) => encodeURIComponent(s));
const path = fc.oneof(
  fc.constant('/ngsi-ld/v1/entities'),
  fc.constant('/ngsi-ld/v1/entities/'),
  seg(id).map((i) => `/ngsi-ld/v1/entities/${i}`),
  seg(id).map((i) => `/ngsi-ld/v1/entities/${i}/attrs`),
  fc.tuple(seg(id), seg(attr)).map(([i, a]) => `/ngsi-ld/v1/entities/${i}/attrs/${a}`),
  fc.constantFrom('create', 'upsert', 'update', 'merge', 'delete', 'query', 'x').map((op) => `/ngsi-ld/v1/entityOperations/${op}`),
  fc.constant('/ngsi-ld/v1/temporal/entities'),
  seg(id).map((i) => `/ngsi-ld/v1/temporal/entities/${i}`),
  fc.tuple(seg(id), seg(attr)).map(([i, a]) => `/ngsi-ld/v1/temporal/entities/${i}/attrs/${a}`),
  fc.tuple(seg(id), seg(attr), seg(junk)).map(([i, a, n]) => `/ngsi-ld/v1/temporal/entities/${i}/attrs/${a}/${n}`),
  fc.constant('/ngsi-ld/v1/temporal/entityOperations/query'),
  fc.constant('/ngsi-ld/v1/types'),
  seg(typeName).map((t) => `/ngsi-ld/v1/types/${t}`),
  fc.constant('/ngsi-ld/v1/attributes'),
  seg(attr).map((a) => `/ngsi-ld/v1/attributes/${a}`),
  fc.constant('/ngsi-ld/v1/jsonldContexts'),
  seg(junk).map((c) => `/ngsi-ld/v1/jsonldContexts/${c}`),
  fc.constant('/ngsi-ld/v1/subscriptions'),
  fc.constant('/ngsi-ld/v1/subscriptions/'),
  seg(fc.oneof(id, fc.constant('urn:ngsi-ld:Subscription:s1'))).map((i) => `/ngsi-ld/v1/subscriptions/${i}`),
  ascii.map((s) => `/ngsi-ld/v1/${s.replace(/[?#\s]/g, '')}`),
);

const attribute = fc.oneof(
  fc.record({ type: fc.constantFrom('Property', 'Relationship', 'GeoProperty', 'LanguageProperty', 'JsonProperty', 'x'), value: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] }),
  fc.record({ type: fc.constant('Relationship'), object: id }),
  fc.record({ type: fc.constant('GeoProperty'), value: fc.record({ type: fc.constant('Point'), coordinates: fc.array(fc.double(), { maxLength: 3 }) }) }),
  fc.record({ type: fc.constant('LanguageProperty'), languageMap: fc.dictionary(fc.constantFrom('en', 'fr', '@none', 'x!'), text) }),
  fc.constant('urn:ngsi-ld:null'),
  fc.jsonValue({ maxDepth: 3 }),
);
const entity = fc.record({
  id,
  type: fc.oneof(typeName, fc.array(typeName, { maxLength: 3 })),
  temperature: attribute,
  name: attribute,
  scope: fc.oneof(fc.constantFrom('/A/B', '//', 'x'), fc.array(text, { maxLength: 2 })),
  '@context': fc.oneof(fc.constant(CORE), fc.constant([CORE]), fc.constant({ ex: 'https://example.org/' }), text),
}, { requiredKeys: [] });

// Endpoints on 127.0.0.1 port 9 (discard, nothing listens) or the gateway's own broker: never a real receiver.
const subscription = fc.record({
  id: fc.oneof(id, fc.constant('urn:ngsi-ld:Subscription:s1')),
  type: fc.constantFrom('Subscription', 'x'),
  entities: fc.array(fc.record({ type: typeName, id, idPattern: PARAM_VALUES['idPattern']! }, { requiredKeys: [] }), { maxLength: 2 }),
  watchedAttributes: fc.array(attr, { maxLength: 2 }),
  notificationTrigger: fc.array(fc.constantFrom('entityCreated', 'attributeUpdated', 'attributeDeleted', 'x'), { maxLength: 2 }),
  q: PARAM_VALUES['q']!,
  timeInterval: fc.oneof(fc.integer({ min: -5, max: 100 }), fc.double()),
  throttling: fc.oneof(fc.integer({ min: -5, max: 100 }), text),
  expiresAt: PARAM_VALUES['timeAt']!,
  isActive: fc.oneof(fc.boolean(), text),
  jsonldContext: fc.constantFrom(CORE, 'x', 'http://127.0.0.1:9/ctx.jsonld'),
  notification: fc.record({
    format: fc.constantFrom('normalized', 'keyValues', 'concise', 'x'),
    attributes: fc.array(attr, { maxLength: 2 }),
    showChanges: fc.boolean(),
    join: fc.constantFrom('inline', 'flat', 'x'),
    joinLevel: fc.integer({ min: -1, max: 20 }),
    endpoint: fc.record({
      uri: fc.constantFrom('http://127.0.0.1:9/notify', 'mqtt://127.0.0.1:9/t', 'mqtt://127.0.0.1/#', 'ftp://x', 'x'),
      accept: fc.constantFrom('application/json', 'application/ld+json', 'application/geo+json', 'text/plain'),
      timeout: fc.integer({ min: -1, max: 2_000 }),
      notifierInfo: fc.array(fc.record({ key: fc.constantFrom('MQTT-QoS', 'MQTT-Version', 'x'), value: fc.constantFrom('0', '2', '3', 'mqtt5.0', 'x') }), { maxLength: 2 }),
    }, { requiredKeys: [] }),
  }, { requiredKeys: [] }),
  '@context': fc.oneof(fc.constant(CORE), fc.constant([CORE]), text),
}, { requiredKeys: [] });

const body = fc.oneof(
  entity.map((e) => JSON.stringify(e)),
  subscription.map((sub) => JSON.stringify(sub)),
  fc.array(entity, { maxLength: 4 }).map((a) => JSON.stringify(a)),
  fc.array(id, { maxLength: 4 }).map((a) => JSON.stringify(a)),
  fc.record({ type: fc.constantFrom('Query', 'x'), entities: fc.array(fc.record({ type: typeName, id, idPattern: PARAM_VALUES['idPattern']! }, { requiredKeys: [] }), { maxLength: 2 }),
    q: PARAM_VALUES['q']!, attrs: fc.array(attr, { maxLength: 2 }), temporalQ: fc.record({ timerel: PARAM_VALUES['timerel']!, timeAt: PARAM_VALUES['timeAt']! }) }, { requiredKeys: [] })
    .map((q) => JSON.stringify(q)),
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
  ascii,
  fc.constantFrom('{', '[]', '{"id":', '\u0000', '{"a":1}{"b":2}', '1e999', '"\\ud800"'),
);

const headers = fc.record({
  'Content-Type': fc.constantFrom('application/json', 'application/ld+json', 'application/merge-patch+json', 'text/plain', 'application/json; charset=utf-8', ';;'),
  Accept: fc.constantFrom('application/json', 'application/ld+json', 'application/geo+json', '*/*', 'text/html', 'application/json;q=0', ''),
  Link: fc.constantFrom(`<${CORE}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
    '<http://127.0.0.1:9/ctx.jsonld>; rel="http://www.w3.org/ns/json-ld#context"', '<x>; rel=other', 'garbage'),
  'NGSILD-Tenant': fc.constantFrom('t1', 'bad tenant!', 'x'.repeat(80)),
}, { requiredKeys: [] });

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.record({
  method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD'),
  path,
  query,
  headers,
  body: fc.option(body, { nil: undefined }),
}).map(({ method, path: p, query: q, headers: h, body: b }) => ({
  method,
  path: p + q,
  headers: h as Record<string, string>, // NOTE: a record of optional string members
  ...(b !== undefined && method !== 'GET' && method !== 'HEAD' ? { body: b } : {}),
}));

/** Mostly `valid`, sometimes `broken`: requests must get past the first check to reach the deeper ones. */
const mostly = <T>(valid: fc.Arbitrary<T>, broken: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ arbitrary: valid, weight: 5 }, { arbitrary: broken, weight: 1 });

/** q expressions: well-formed terms joined by ; and |, or the grammar's tokens in any order. */
const qTerm = fc.tuple(
  fc.constantFrom('temperature', 'name', 'temperature.observedAt', 'location', 'a[b]', 'name[x.y]'),
  fc.constantFrom('==', '!=', '>', '>=', '<', '<=', '~=', '!~='),
  fc.oneof(fc.integer({ min: -100, max: 100 }).map(String), fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.constantFrom('"n0"', '"(a+)+$"', '20..30', '"a","b"', '2026-01-01T00:00:00Z', 'true', 'urn:ngsi-ld:Sensor:s1')),
).map(([a, op, v]) => `${a}${op}${v}`);
const qToken = fc.constantFrom('temperature', 'a.b', 'a[b.c]', '==', '!=', '~=', ';', '|', '(', ')', '!', '20', '"x"', '"', '..', '[', ']', ',', ' ');
const qExpr = mostly(
  fc.array(fc.tuple(qTerm, fc.constantFrom(';', '|')), { minLength: 1, maxLength: 4 })
    .map((terms) => terms.map(([t, sep], i) => (i === 0 ? t : `${sep}${t}`)).join('')).chain((q) => fc.constantFrom(q, `(${q})`, `!${q}`)),
  fc.array(qToken, { minLength: 1, maxLength: 12 }).map((t) => t.join('')),
);
const num = fc.oneof({ arbitrary: fc.double({ min: -180, max: 180, noNaN: true }), weight: 4 }, { arbitrary: fc.double(), weight: 1 }).map(String);
const lat = fc.oneof({ arbitrary: fc.double({ min: -90, max: 90, noNaN: true }), weight: 4 }, { arbitrary: fc.double(), weight: 1 }).map(String);
const pos = fc.tuple(num, lat).map(([x, y]) => `[${x},${y}]`);
const closedRing = fc.array(pos, { minLength: 3, maxLength: 6 }).map((a) => `[${[...a, a[0]].join(',')}]`);
const geoQuery = fc.oneof(
  fc.record({ georel: fc.constantFrom('near;maxDistance==1000', 'near;minDistance==10', 'intersects', 'disjoint', 'equals'), geometry: fc.constant('Point'), coordinates: pos }),
  fc.record({ georel: fc.constantFrom('within', 'intersects', 'contains', 'overlaps', 'disjoint'), geometry: fc.constant('Polygon'), coordinates: closedRing.map((r) => `[${r}]`) }),
  fc.record({ georel: fc.constantFrom('intersects', 'disjoint'), geometry: fc.constant('LineString'), coordinates: fc.array(pos, { minLength: 2, maxLength: 5 }).map((a) => `[${a.join(',')}]`) }),
  fc.record({
    georel: fc.oneof(fc.tuple(fc.constantFrom('near;maxDistance==', 'near;minDistance==', 'near;', 'within;'), num).map(([a, b]) => a + b), junk),
    geometry: fc.oneof(fc.constantFrom('Point', 'Polygon', 'MultiPolygon', 'Circle'), junk),
    coordinates: fc.oneof(pos, closedRing, closedRing.map((r) => `[[${r}]]`), fc.array(num, { maxLength: 4 }).map((a) => `[${a.join(',')}]`), junk),
  }, { requiredKeys: [] }),
).chain((g) => fc.record({ geoproperty: fc.constantFrom(undefined, 'location', 'observationSpace', 'x') }).map((extra) => ({ ...g, ...extra })));
const validDate = fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true });
const dateTime = fc.oneof({ arbitrary: validDate.map((d) => d.toISOString()), weight: 10 }, {
  arbitrary: fc.oneof(fc.constantFrom('2026-01-01T00:00:00', '2026-02-30T00:00:00Z', '-000001-01-01T00:00:00Z', '+275760-09-13T00:00:00.001Z'), junk), weight: 1,
});
const timeWindow = mostly<Record<string, string>>(
  fc.oneof(
    fc.record({ timerel: fc.constantFrom('before', 'after'), timeAt: dateTime }),
    fc.tuple(validDate, fc.integer({ min: 1, max: 1e11 }))
      .map(([d, span]) => ({ timerel: 'between', timeAt: d.toISOString(), endTimeAt: new Date(d.getTime() + span).toISOString() })),
  ),
  fc.record({ timerel: fc.constantFrom('before', 'after', 'between', 'x'), timeAt: dateTime, endTimeAt: dateTime }, { requiredKeys: [] }),
);
const temporalQuery = fc.record({
  window: timeWindow,
  timeproperty: fc.constantFrom(undefined, 'observedAt', 'createdAt', 'modifiedAt', 'deletedAt', 'x'),
  lastN: fc.option(mostly(fc.integer({ min: 1, max: 100_000 }).map(String), fc.oneof(fc.constantFrom('0', '-1'), junk)), { nil: undefined }),
  aggr: fc.option(fc.record({
    aggrMethods: mostly(fc.constantFrom('avg', 'min,max', 'sum,totalCount,distinctCount', 'stddev,sumsq'), junk),
    aggrPeriodDuration: mostly(fc.constantFrom('PT1H', 'P1D', 'PT0S', 'P1Y2M', 'PT0.5S'), junk),
    format: fc.constant('aggregatedValues'),
  }, { requiredKeys: ['aggrMethods', 'format'] }), { nil: undefined }),
}, { requiredKeys: ['window'] }).map(({ aggr, window, ...t }) => ({ ...window, ...t, ...aggr }));
const pagination = fc.record({
  limit: mostly(fc.integer({ min: 0, max: 1_000 }).map(String), fc.oneof(fc.constantFrom('-1', '1001', '1e3', '0x10', '1.5', '', '99999999999999999999'), junk)),
  offset: mostly(fc.integer({ min: 0, max: 5_000 }).map(String), fc.oneof(fc.constantFrom('-1', '1e3', '', '99999999999999999999'), junk)),
  count: fc.constantFrom('true', 'false', 'x'),
}, { requiredKeys: [] });
const toQuery = (params: Record<string, string | undefined>): string => {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(v!)}`);
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
};
const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined, freq: 2 });
const queryType = mostly(fc.constantFrom('Sensor', 'Room', 'Sensor,Room', '*'), typeName);

/**
 * Requests aimed at the query parsers: q, geo-queries, temporal parameters and pagination together on
 * the query routes, where the general arbitrary rarely combines all the parameters one feature needs.
 * Each part is mostly well-formed, so that requests get past the first check to the deeper ones.
 */
export const fuzzQueryRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc.record({ type: mostly<string | undefined>(queryType, fc.constant(undefined)), q: maybe(qExpr), geo: maybe(geoQuery), page: maybe(pagination),
    accept: fc.constantFrom('application/json', 'application/ld+json', 'application/geo+json') })
    .map(({ type, q, geo, page, accept }) => ({ path: '/ngsi-ld/v1/entities' + toQuery({ type, q, ...geo, ...page }), accept })),
  fc.record({ type: queryType, q: maybe(qExpr), geo: maybe(geoQuery), temporal: temporalQuery, page: maybe(pagination),
    accept: fc.constantFrom('application/json', 'application/ld+json') })
    .map(({ type, q, geo, temporal, page, accept }) => ({ path: '/ngsi-ld/v1/temporal/entities' + toQuery({ type, q, ...geo, ...temporal, ...page }), accept })),
  fc.record({ temporal: temporalQuery, attrs: maybe(fc.constantFrom('temperature', 'temperature,name', 'x')), accept: fc.constantFrom('application/json', 'application/ld+json') })
    .map(({ temporal, attrs, accept }) => ({ path: `/ngsi-ld/v1/temporal/entities/${encodeURIComponent(SEED_IDS[0]!)}` + toQuery({ ...temporal, attrs }), accept })),
).map(({ path: p, accept }) => ({ method: 'GET', path: p, headers: { Accept: accept } }));
