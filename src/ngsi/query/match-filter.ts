// In-memory evaluation of query filters against one entity, for subscriptions and notifications
// (NGSI-LD §4.9 q, §4.17 type selection, §4.19 scopeQ, idPattern).

import { compileIdPattern, type EntityFilter } from '../filters.js';
import type { Entity } from '../model.js';
import { evaluateQ } from './q-evaluate.js';
import { evaluateScopeQ } from './scope-q.js';
import { evaluateTypeSelection } from './type-selection.js';

/**
 * Whether the entity passes the filter. Undefined for filter kinds evaluated elsewhere (geo
 * queries have their own predicates), so a caller can tell "no match" from "not mine".
 */
export function matchesFilter(filter: EntityFilter, entity: Entity): boolean | undefined {
  switch (filter.kind) {
    case 'q':
      return evaluateQ(filter.expr, entity);
    case 'scopeQ':
      return evaluateScopeQ(filter.expr, entity.scope);
    case 'types':
      return evaluateTypeSelection(filter.expr, entity.types);
    case 'idPattern':
      return compileIdPattern(filter.pattern).test(entity.id);
    case 'typeIris':
      return entity.types.some((t) => filter.iris.includes(t));
    case 'ids':
      return filter.ids.includes(entity.id);
    case 'anyOf': {
      // An alternative holds when none of its filters fails; undefined (not ours) does not fail it.
      let unknown = false;
      for (const alternative of filter.alternatives) {
        const results = alternative.map((f) => matchesFilter(f, entity));
        if (results.every((r) => r === true)) return true;
        if (results.some((r) => r === undefined) && !results.some((r) => r === false)) unknown = true;
      }
      return unknown ? undefined : false;
    }
    default:
      return undefined;
  }
}
