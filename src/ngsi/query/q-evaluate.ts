// In-memory evaluation of a parsed q (NGSI-LD §4.9) against one entity; subscriptions use it, and
// the case table checks it against the SQL translation in store/q-sql.ts.

import { assertNever, type Entity } from '../model.js';
import { splitOp, type QExpr, type QPath, type QPositiveOp, type QScalar, type QValue } from './q-ast.js';
import { compileQPattern, DATE_SHAPE, TIME_SHAPE } from './q-literals.js';
import { resolvePath, type QElement } from './q-targets.js';

type Cmp = '==' | '>' | '>=' | '<' | '<=';

function cmp<T extends number | string>(a: T, op: Cmp, b: T): boolean {
  switch (op) {
    case '==': return a === b;
    case '>': return a > b;
    case '>=': return a >= b;
    case '<': return a < b;
    case '<=': return a <= b;
    default: return assertNever(op, 'operator');
  }
}

const instantMatches = (el: QElement, op: Cmp, at: number): boolean =>
  (el.t === 'str' && el.instant !== undefined && cmp(el.instant, op, at)) || (el.t === 'instant' && cmp(el.n, op, at));

/** One element against one literal. Different kinds never match (never an error). */
function matchesScalar(el: QElement, op: Cmp, lit: QScalar): boolean {
  switch (lit.kind) {
    case 'number':
      return el.t === 'num' && cmp(el.n, op, lit.value);
    case 'boolean':
      return el.t === 'bool' && op === '==' && el.b === lit.value;
    case 'string':
      if (op === '==') return ((el.t === 'str' || el.t === 'ref') && el.s === lit.value) || (el.t === 'vocab' && el.s === lit.iri);
      return el.t === 'str' && cmp(el.s, op, lit.value);
    case 'uri':
      return op === '==' && (el.t === 'str' || el.t === 'ref' || el.t === 'vocab') && el.s === lit.value;
    case 'dateTime':
      return instantMatches(el, op, lit.value);
    case 'date':
      return instantMatches(el, op, lit.instant) || (el.t === 'str' && DATE_SHAPE.test(el.s) && cmp(el.s, op, lit.value));
    case 'time':
      return el.t === 'str' && TIME_SHAPE.test(el.s) && cmp(el.s, op, lit.value);
    default:
      return assertNever(lit, 'literal');
  }
}

/** A test for one element under a positive operator: any list item, both range bounds, a pattern. */
function elementTest(op: QPositiveOp, value: QValue): (el: QElement) => boolean {
  switch (value.kind) {
    case 'pattern': {
      const re = compileQPattern(value.source);
      return (el) => el.t === 'str' && re.test(el.s);
    }
    case 'range':
      return (el) => matchesScalar(el, '>=', value.from) && matchesScalar(el, '<=', value.to);
    case 'list':
      return (el) => value.items.some((item) => matchesScalar(el, '==', item));
    default:
      return op === '~=' ? () => false : (el) => matchesScalar(el, op, value);
  }
}

function anyInstance(entity: Entity, path: QPath, holds: (els: QElement[]) => boolean): boolean {
  for (const instance of entity.attrs[path.attr] ?? []) {
    const els = resolvePath(instance, path);
    if (els !== undefined && holds(els)) return true;
  }
  return false;
}

/**
 * Whether the entity matches (§4.9): an attribute matches when ANY of its instances (datasetIds)
 * does. Within one instance `==` holds when any element matches; `!=` holds when the target exists
 * and no element equals (on an array: "contains none of"); `!~=` holds when the target has string
 * elements and none matches (patterns test strings only, never Relationship objects).
 */
export function evaluateQ(expr: QExpr, entity: Entity): boolean {
  switch (expr.kind) {
    case 'and':
      return expr.terms.every((t) => evaluateQ(t, entity));
    case 'or':
      return expr.terms.some((t) => evaluateQ(t, entity));
    case 'exists':
      return anyInstance(entity, expr.path, () => true) !== expr.negated;
    case 'compare': {
      const { positive, negated } = splitOp(expr.op);
      const test = elementTest(positive, expr.value);
      if (!negated) return anyInstance(entity, expr.path, (els) => els.some(test));
      const hasWitness = positive === '~=' ? (els: QElement[]) => els.some((el) => el.t === 'str') : () => true;
      return anyInstance(entity, expr.path, (els) => hasWitness(els) && !els.some(test));
    }
    default:
      return assertNever(expr, 'q expression');
  }
}
