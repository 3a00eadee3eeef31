// The query languages of the API (NGSI-LD §4.9 q, §4.17 type selection, §4.19 scopeQ): parsers into
// expanded ASTs and in-memory evaluators. The store translates the same ASTs into SQL.

export {
  Q_LIMITS, isInstantMember, isPlainPath, splitOp,
  type QCompareOp, type QExpr, type QKey, type QMember, type QPath, type QPositiveOp, type QScalar, type QValue,
} from './q-ast.js';
export { parseQ } from './q-parser.js';
export { evaluateQ } from './q-evaluate.js';
export { DATE_SHAPE, TIME_SHAPE, compileQPattern, instantOf } from './q-literals.js';
export { valueElements, type QElement } from './q-targets.js';
export { evaluateScopeQ, parseScopeQ, scopeTermTest, type ScopeExpr, type ScopeTerm } from './scope-q.js';
export { evaluateTypeSelection, parseTypeSelection, type TypeExpr } from './type-selection.js';
export { matchesFilter } from './match-filter.js';
