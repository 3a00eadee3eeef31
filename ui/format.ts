// How the page reads and shows NGSI-LD entities in the normalized representation: attributes and
// their instances, values as short text, the newest observedAt and ages. Pure: no DOM.

export interface Attribute {
  type: string;
  value?: unknown;
  object?: unknown;
  languageMap?: unknown;
  vocab?: unknown;
  json?: unknown;
  valueList?: unknown;
  objectList?: unknown;
  observedAt?: string;
  unitCode?: string;
  datasetId?: string;
  [sub: string]: unknown;
}

/** An entity as the API answers it (normalized): `id`, `type` and attributes by name. */
export type Entity = { id: string; type: string | string[] } & Record<string, unknown>;

/** Members of an entity that are not attributes (NGSI-LD §4.5.1, system attributes). */
const NOT_ATTRIBUTES = new Set(['id', 'type', '@context', 'scope', 'createdAt', 'modifiedAt', 'deletedAt']);

function isAttribute(v: unknown): v is Attribute {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { type?: unknown }).type === 'string';
}

/** The attributes of an entity, each with its instances (several for a multi-attribute with datasetIds). */
export function attributesOf(entity: Entity): Array<{ name: string; instances: Attribute[] }> {
  const out: Array<{ name: string; instances: Attribute[] }> = [];
  for (const [name, raw] of Object.entries(entity)) {
    if (NOT_ATTRIBUTES.has(name)) continue;
    const instances = (Array.isArray(raw) ? raw : [raw]).filter(isAttribute);
    if (instances.length > 0) out.push({ name, instances });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The first instance of an attribute (the default one first), or undefined. */
export function attributeOf(entity: Entity, name: string): Attribute | undefined {
  const raw = entity[name];
  const instances = (Array.isArray(raw) ? raw : [raw]).filter(isAttribute);
  return instances.find((a) => a.datasetId === undefined) ?? instances[0];
}

export function typeNames(entity: Entity): string[] {
  return Array.isArray(entity.type) ? entity.type : [entity.type];
}

/** Epoch ms of an ISO 8601 date-time, or undefined. */
export function instantOf(iso: unknown): number | undefined {
  if (typeof iso !== 'string') return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The newest observedAt over every attribute instance of the entity. */
export function newestObservedAt(entity: Entity): number | undefined {
  let newest: number | undefined;
  for (const { instances } of attributesOf(entity)) {
    for (const a of instances) {
      const t = instantOf(a.observedAt);
      if (t !== undefined && (newest === undefined || t > newest)) newest = t;
    }
  }
  return newest;
}

/** A number the chart can plot: a Property's numeric value. */
export function numericValue(a: Attribute | undefined): number | undefined {
  return a?.type === 'Property' && typeof a.value === 'number' && Number.isFinite(a.value) ? a.value : undefined;
}

/** `42 s`, `5 min`, `3 h`, `2 d`: how long ago, coarsely. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

export function formatNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  const abs = Math.abs(n);
  return abs >= 1000 ? n.toFixed(0) : abs >= 1 ? String(Math.round(n * 100) / 100) : String(Number(n.toPrecision(3)));
}

/** Symbols of common UN/CEFACT unit codes (NGSI-LD unitCode); others are shown as they are. */
const UNITS: Readonly<Record<string, string>> = {
  CEL: '°C', FAH: '°F', KEL: 'K', P1: '%', BAR: 'bar', A97: 'hPa', PAL: 'Pa', KPA: 'kPa', MTR: 'm', CMT: 'cm', MMT: 'mm', KMT: 'km',
  MTS: 'm/s', KMH: 'km/h', WTT: 'W', KWT: 'kW', KWH: 'kWh', WHR: 'Wh', VLT: 'V', AMP: 'A', HTZ: 'Hz', LUX: 'lx', GRM: 'g', KGM: 'kg',
  LTR: 'l', MTQ: 'm³', '59': 'ppm', DD: '°', SEC: 's', MIN: 'min', HUR: 'h',
};

export function unitSymbol(code: string | undefined): string | undefined {
  return code === undefined ? undefined : UNITS[code] ?? code;
}

export function formatBytes(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

const clip = (s: string, max = 80): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

function describeGeometry(g: unknown): string {
  if (typeof g !== 'object' || g === null) return clip(JSON.stringify(g));
  const { type, coordinates } = g as { type?: unknown; coordinates?: unknown };
  if (type === 'Point' && Array.isArray(coordinates)) {
    return `Point ${coordinates.slice(0, 2).map((c) => (typeof c === 'number' ? c.toFixed(5) : '?')).join(', ')}`;
  }
  return typeof type === 'string' ? type : clip(JSON.stringify(g));
}

function plain(v: unknown): string {
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'string') return clip(v);
  return clip(JSON.stringify(v) ?? '');
}

/** The value of one attribute instance as short text (with its unit code). */
export function formatValue(a: Attribute): string {
  switch (a.type) {
    case 'Relationship':
      return plain(a.object);
    case 'ListRelationship':
      return plain(a.objectList);
    case 'GeoProperty':
      return describeGeometry(a.value);
    case 'LanguageProperty':
      return plain(a.languageMap);
    case 'VocabProperty':
      return plain(a.vocab);
    case 'JsonProperty':
      return plain(a.json);
    case 'ListProperty':
      return plain(a.valueList);
    default: {
      const text = plain(a.value);
      const unit = unitSymbol(a.unitCode);
      return unit === undefined ? text : `${text}${unit.startsWith('°') && unit.length <= 2 ? '' : ' '}${unit}`;
    }
  }
}

/** Members of an attribute that are not sub-attributes (NGSI-LD §4.5.2 and the representation members). */
const ATTRIBUTE_MEMBERS = new Set([
  'type', 'value', 'object', 'languageMap', 'vocab', 'json', 'valueList', 'objectList', 'observedAt', 'unitCode', 'datasetId',
  'instanceId', 'createdAt', 'modifiedAt', 'deletedAt', 'previousValue', 'previousObject', 'previousLanguageMap', 'previousVocab',
  'previousJson', 'previousValueList', 'previousObjectList', 'lang', 'objectType',
]);

/** The sub-attributes of an attribute instance, by name. */
export function subAttributesOf(a: Attribute): Array<{ name: string; attr: Attribute }> {
  return Object.entries(a)
    .filter((entry): entry is [string, Attribute] => !ATTRIBUTE_MEMBERS.has(entry[0]) && isAttribute(entry[1]))
    .map(([name, attr]) => ({ name, attr }));
}

/** The entities of a notification message: `{ metadata, body: Notification }` (MQTT endpoints), or a bare Notification. */
export function entitiesOfMessage(payload: string): Entity[] {
  try {
    const msg = JSON.parse(payload) as { body?: { data?: unknown }; data?: unknown }; // NOTE: checked below
    const data = msg.body?.data ?? msg.data;
    return Array.isArray(data) ? data.filter((e): e is Entity => typeof e === 'object' && e !== null && typeof (e as Entity).id === 'string') : [];
  } catch {
    return [];
  }
}

/** A regular expression matching ids that contain `text` (idPattern, NGSI-LD §4.9). */
export const idContainsPattern = (text: string): string => `.*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*`;
