// Temporal representations of instances (NGSI-LD §4.5.7, §4.5.9): scalar Properties, rendered without
// ngsi's renderer, give exactly (members and their order) what that renderer gives; other instances
// and deletions keep going through it.

import { describe, expect, it } from 'vitest';
import { formatDateTime, renderEntity, type Attribute, type Json, type JsonObject } from '../../../src/ngsi/index.js';
import type { HistoryInstance, TimedInstance, TimeProperty } from '../../../src/store/index.js';
import { renderNormalized, renderTemporalValues, type TemporalRenderContext } from '../../../src/ngsi/temporal/render.js';
import type { TemporalView } from '../../../src/temporal/types.js';
import { createDateTimeFormatter } from '../../../src/ngsi/temporal/date-time.js';
import { EX, mapper } from '../fake-mapper.js';

const ATTR = EX + 'temperature';
const T = Date.UTC(2024, 4, 1, 8, 30);
const base = { createdAt: T + 5, modifiedAt: T + 9, sub: {} };

const ATTRIBUTES: Attribute[] = [
  { ...base, kind: 'Property', value: 21.5, observedAt: T },
  { ...base, kind: 'Property', value: 'on', observedAt: T + 1, unitCode: 'CEL', datasetId: 'urn:ngsi-ld:Dataset:b' },
  { ...base, kind: 'Property', value: false },
  { ...base, kind: 'Property', value: 0, observedAt: T + 2, sub: { [EX + 'owner']: { ...base, kind: 'Relationship', object: 'urn:x' } } },
  { ...base, kind: 'Property', value: { [EX + 'temperature']: 3 }, observedAt: T + 3 },
  { ...base, kind: 'Relationship', object: 'urn:ngsi-ld:Person:1', observedAt: T + 4 },
];

function timed(a: Attribute | undefined, i: number): TimedInstance {
  const instance: HistoryInstance = {
    entityId: 'urn:ngsi-ld:Sensor:1', attr: ATTR, instanceId: `urn:ngsi-ld:Instance:${i}`, createdAt: T + 5 + i, modifiedAt: T + 9 + i,
  };
  if (a) instance.attribute = a;
  if (a?.observedAt !== undefined) instance.observedAt = a.observedAt;
  if (a?.datasetId !== undefined) instance.datasetId = a.datasetId;
  if (i % 2 === 0) instance.subject = 'alice';
  if (i === 2) instance.deletedAt = T + 20;
  return { time: T + 60_000 * i, instance };
}

const INSTANCES = ATTRIBUTES.map(timed);

function context(sysAttrs: boolean, timeproperty: TimeProperty, audit: boolean): TemporalRenderContext {
  const view: TemporalView = { format: 'normalized', sysAttrs, audit, aggrMethods: [] };
  return { mapper, view, timeproperty, formatTime: createDateTimeFormatter() };
}

/** One instance through ngsi's renderer, then the temporal members, as the normalized form has them. */
function expectedNormalized({ instance }: TimedInstance, sysAttrs: boolean, timeproperty: TimeProperty, audit: boolean): JsonObject {
  const attrs = instance.attribute ? { [ATTR]: [instance.attribute] } : {};
  const shell = { id: '', types: [], attrs, createdAt: 0, modifiedAt: 0 };
  const rendered = renderEntity(shell, mapper, { format: 'normalized', sysAttrs })['temperature'];
  const out: JsonObject = { ...(rendered as JsonObject) }; // NOTE: one normalized instance renders as an object
  out.instanceId = instance.instanceId;
  if (timeproperty === 'createdAt') out.createdAt = formatDateTime(instance.createdAt);
  if (timeproperty === 'modifiedAt') out.modifiedAt = formatDateTime(instance.modifiedAt);
  if (instance.deletedAt !== undefined) out.deletedAt = formatDateTime(instance.deletedAt);
  if (audit && timeproperty !== 'observedAt' && instance.subject !== undefined) out.sub = { type: 'Property', value: instance.subject };
  return out;
}

describe('renderNormalized', () => {
  for (const sysAttrs of [false, true]) {
    for (const [timeproperty, audit] of [['observedAt', false], ['createdAt', true], ['modifiedAt', false]] as const) {
      it(`renders every instance as ngsi does (sysAttrs ${sysAttrs}, ${timeproperty}${audit ? ', audit' : ''})`, () => {
        const got = renderNormalized(ATTR, INSTANCES, context(sysAttrs, timeproperty, audit));
        const want = INSTANCES.map((t) => expectedNormalized(t, sysAttrs, timeproperty, audit));
        expect(got).toEqual(want);
        // Same members in the same order: the bytes of the answer do not change.
        expect(JSON.stringify(got)).toBe(JSON.stringify(want));
      });
    }
  }

  it('renders deletions with NGSI-LD Null in the kind of the attribute', () => {
    const deletion = timed(undefined, 7);
    deletion.instance.datasetId = 'urn:ngsi-ld:Dataset:b';
    const [out] = renderNormalized(ATTR, [deletion], context(true, 'modifiedAt', false));
    expect(out).toEqual({
      type: 'Property', value: 'urn:ngsi-ld:null', datasetId: 'urn:ngsi-ld:Dataset:b', createdAt: formatDateTime(T + 12),
      modifiedAt: formatDateTime(T + 16), instanceId: 'urn:ngsi-ld:Instance:7',
    });
  });
});

describe('renderTemporalValues', () => {
  it('pairs each simplified value, as ngsi gives it, with the instant', () => {
    const got = renderTemporalValues(ATTR, INSTANCES, context(false, 'observedAt', false));
    const simplified = (a: Attribute): Json | undefined => renderEntity(
      { id: '', types: [], attrs: { [ATTR]: [a] }, createdAt: 0, modifiedAt: 0 }, mapper, { format: 'keyValues', sysAttrs: false },
    )['temperature'];
    const pairs = (list: TimedInstance[]): Json[] => list.map((t) => [simplified(t.instance.attribute!) ?? null, formatDateTime(t.time)]);
    const byDataset = (id: string | undefined): TimedInstance[] => INSTANCES.filter((t) => t.instance.datasetId === id);
    expect(got).toEqual([
      { type: 'Relationship', objects: pairs(byDataset(undefined)) },
      { type: 'Property', values: pairs(byDataset('urn:ngsi-ld:Dataset:b')), datasetId: 'urn:ngsi-ld:Dataset:b' },
    ]);
  });
});
