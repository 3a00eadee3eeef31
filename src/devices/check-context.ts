// Checks of a device record that need its @context: the type and attribute names expand to IRIs and
// the static attributes are NGSI-LD attributes. Run at registration, so that a context that cannot be
// loaded or a bad static attribute fails once here instead of on every measurement.

import type { ContextService } from '../jsonld/index.js';
import { BadRequestDataError, isAbsoluteUri, parseAttributes } from '../ngsi/index.js';
import type { DeviceRecord } from '../store/index.js';
import { invalid } from './validate.js';

export type ContextChecked = Pick<DeviceRecord, 'entityType' | 'renames' | 'unitCodes' | 'staticAttributes' | 'context' | 'commands'>;

const detailOf = (err: BadRequestDataError): string => (err.detail === undefined ? err.message : `${err.message}: ${err.detail}`);

export async function checkWithContext(contexts: Pick<ContextService, 'resolve'>, d: ContextChecked): Promise<void> {
  let ctx;
  try {
    ctx = await contexts.resolve(d.context);
  } catch (err) {
    if (err instanceof BadRequestDataError) throw invalid(`context: ${detailOf(err)}`, err);
    throw err;
  }
  const expands = (member: string, name: string): void => {
    // A name the context maps to a keyword (`"type": "@type"`) names nothing.
    if (!isAbsoluteUri(ctx.expandTerm(name))) throw invalid(`${member}: '${name}' does not expand to an IRI`);
  };
  expands('entityType', d.entityType);
  for (const [key, attr] of Object.entries(d.renames)) expands(`renames.${key}`, attr);
  for (const attr of Object.keys(d.unitCodes)) expands(`unitCodes.${attr}`, attr);
  for (const { name } of d.commands) expands(`commands.${name}`, name);
  try {
    parseAttributes(d.staticAttributes, ctx, { now: 0, allowNull: false });
  } catch (err) {
    if (err instanceof BadRequestDataError) throw invalid(`staticAttributes: ${detailOf(err)}`, err);
    throw err;
  }
}
