// The scopeQ case table (NGSI-LD §4.19) over the q fixtures: `+` one level, `#` the level and
// everything below, `;` AND, `,` OR, parentheses. Run in memory and through SQL.

export interface ScopeCase {
  scopeQ: string;
  /** Fixture numbers (1..12) selected, in creation order. */
  expect: number[];
}

// Scopes: 1 /Madrid/Gardens/ParqueNorte, 2 /Madrid/Gardens/ParqueSur + /Valencia, 3 /Madrid,
// 4 /Madrid/Centro/Sol, 5 /Valencia/Centro, 9 /Lyon, 11 /Madrid/Gardens,
// 12 /Madrid/Gardens/ParqueNorte/Rosaleda; 6, 7, 8 and 10 have none.
export const SCOPE_CASES: ScopeCase[] = [
  { scopeQ: '/Madrid', expect: [3] },
  { scopeQ: '/Madrid/#', expect: [1, 2, 3, 4, 11, 12] },
  { scopeQ: '/Madrid/+', expect: [11] },
  { scopeQ: '/Madrid/Gardens/+', expect: [1, 2] },
  { scopeQ: '/Madrid/Gardens/#', expect: [1, 2, 11, 12] },
  { scopeQ: '/Madrid/+/ParqueNorte', expect: [1] },
  { scopeQ: '/Madrid/+/+', expect: [1, 2, 4] },
  { scopeQ: '/+', expect: [2, 3, 9] },
  { scopeQ: '/#', expect: [1, 2, 3, 4, 5, 9, 11, 12] },
  { scopeQ: '/Valencia,/Lyon', expect: [2, 9] },
  { scopeQ: '/Madrid/#;/Valencia', expect: [2] },
  { scopeQ: '/Madrid/Gardens/ParqueSur;/Valencia/#', expect: [2] },
  { scopeQ: '/Madrid/Centro/#,/Valencia/Centro', expect: [4, 5] },
  { scopeQ: '(/Madrid/#,/Valencia/#);/Valencia', expect: [2] },
  { scopeQ: '/Paris', expect: [] },
  { scopeQ: '/Madrid/Gardens/ParqueNorte/#', expect: [1, 12] },
  { scopeQ: '/Lyon;/Madrid', expect: [] },
  { scopeQ: '/+/+/+/+', expect: [12] },
  { scopeQ: '/Valencia/#', expect: [2, 5] },
  { scopeQ: '/+/Centro/#', expect: [4, 5] },
  { scopeQ: '/Lyon,/Madrid;/Madrid/#', expect: [3, 9] },
  { scopeQ: '(/Lyon,/Madrid);/Madrid/#', expect: [3] },
];
