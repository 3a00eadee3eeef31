// Transient entities (NGSI-LD §4.22): an entity's expiresAt as a write sets, changes or removes it,
// and whether it has passed.

import type { Entity } from './model.js';
import type { ExpiresAt } from './fragment.js';

/** The expiry an entity carries; undefined for a permanent entity. */
export function expiryOf(entity: Entity): ExpiresAt | undefined {
  if (entity.expiresAt === undefined) return undefined;
  return entity.expiresAtText === undefined ? { at: entity.expiresAt } : { at: entity.expiresAt, text: entity.expiresAtText };
}

/** Whether the entity already carries this expiry ('deleted': whether it is permanent). */
export function hasExpiry(entity: Entity, expiry: ExpiresAt | 'deleted'): boolean {
  if (expiry === 'deleted') return entity.expiresAt === undefined;
  return entity.expiresAt === expiry.at && entity.expiresAtText === expiry.text;
}

/** `entity` with this expiry; none or 'deleted' makes it permanent. */
export function withExpiry(entity: Entity, expiry: ExpiresAt | 'deleted' | undefined): Entity {
  const { expiresAt: _at, expiresAtText: _text, ...rest } = entity;
  if (expiry === undefined || expiry === 'deleted') return rest;
  const out: Entity = { ...rest, expiresAt: expiry.at };
  if (expiry.text !== undefined) out.expiresAtText = expiry.text;
  return out;
}

/** Whether the entity's expiresAt has come at `now`: it is due for removal and no longer served. */
export function isExpired(entity: Entity, now: number): boolean {
  return entity.expiresAt !== undefined && entity.expiresAt <= now;
}
