// Scenarios of a broker with authentication on, each beside the baseline it is compared with: creates
// with a Bearer token against the same creates without authentication, and a subject that may read
// 1% of 10,000 entities listing them against an admin selecting the same entities by an indexed q.

import { formatCount } from './format-count.js';
import { isRecord } from './json.js';
import type { BenchRequest } from './load.js';
import type { Check, Dataset, Scenario } from './scenario-types.js';
import { CREATE } from './scenarios.js';

const UPSERT = '/ngsi-ld/v1/entityOperations/upsert';
const PERMISSIONS = '/ngsi-ld/v1/auth/permissions';
const BATCH = 1_000;
export const ASSET_COUNT = 10_000;
/** Every SHARE_EVERY-th Asset is readable by the reader: 1%. */
const SHARE_EVERY = 100;
const SHARED_COUNT = ASSET_COUNT / SHARE_EVERY;
/** The `group` of the shared Assets; every other Asset has another. */
const SHARED_GROUP = 'r';
export const READER = 'reader';

/** The bearer tokens of the scenarios, minted by the run for a key the broker trusts. */
export interface AuthTokens {
  /** A subject with the admin role. */
  readonly admin: string;
  readonly reader: string;
  /** One per client of the load generator, each of its own non-admin subject. */
  readonly clients: readonly string[];
}

/** A scenario of the authenticated broker and the baseline its ratio is taken against. */
export interface AuthPair {
  readonly subject: Scenario;
  readonly baseline: Scenario;
  /** Runs the baseline on a broker without authentication (else on the same broker as the subject). */
  readonly isBaselineUnauthenticated: boolean;
}

const assetId = (n: number): string => `urn:ngsi-ld:Asset:${n}`;
const isShared = (n: number): boolean => n % SHARE_EVERY === 0;

const bearer = (token: string): Readonly<Record<string, string>> => ({ authorization: `Bearer ${token}` });

function asset(n: number): Record<string, unknown> {
  return {
    id: assetId(n), type: 'Asset',
    group: { type: 'Property', value: isShared(n) ? SHARED_GROUP : `g${n % 10}` },
    temperature: { type: 'Property', value: n % 100 },
  };
}

/**
 * NOTE: the Assets are provisioned by an admin and read rights are granted on each shared id through
 * the permission API: a deployment that lets a third party see a slice of its data. Entities a
 * subject created itself would be covered by their `own` permission instead, read through the same
 * rowid list.
 */
function assetsOf(tokens: AuthTokens): Dataset {
  const headers = bearer(tokens.admin);
  return {
    name: 'assets',
    note:
      `auth setup: ${formatCount(ASSET_COUNT)} Asset entities (${ASSET_COUNT / BATCH} upserts of ${formatCount(BATCH)} by an admin), ` +
      `every ${SHARE_EVERY}th with group "${SHARED_GROUP}" (${SHARED_COUNT}), each of those given to ${READER} by a read permission ` +
      `(${SHARED_COUNT} POST /auth/permissions by the admin); the others have groups g0 … g9`,
    steps: [
      {
        requests: ASSET_COUNT / BATCH,
        expectStatus: 201,
        request: (n) => {
          const entities = Array.from({ length: BATCH }, (_, i) => asset(n * BATCH + i));
          return { method: 'POST', path: UPSERT, headers, body: JSON.stringify(entities) };
        },
      },
      {
        requests: SHARED_COUNT,
        expectStatus: 201,
        request: (n) => {
          const permission = { type: 'Permission', target: { id: assetId(n * SHARE_EVERY) }, assignee: READER, action: 'read' };
          return { method: 'POST', path: PERMISSIONS, headers, body: JSON.stringify(permission) };
        },
      },
    ],
  };
}

/** Checks that the answer lists exactly the shared Assets, in creation order. */
const checkShared: Check = (body) => {
  const parsed: unknown = JSON.parse(body);
  if (!Array.isArray(parsed)) return 'the answer is not a JSON array';
  if (parsed.length !== SHARED_COUNT) return `expected ${SHARED_COUNT} entities, got ${parsed.length}`;
  const bad = parsed.findIndex((e, i) => !isRecord(e) || e.id !== assetId(i * SHARE_EVERY));
  return bad < 0 ? undefined : `entity ${bad} is not ${assetId(bad * SHARE_EVERY)}`;
};

function listAssets(name: string, description: string, query: string, token: string, dataset: Dataset): Scenario {
  const request: BenchRequest = { method: 'GET', path: `/ngsi-ld/v1/entities?${query}`, headers: bearer(token) };
  return {
    name, group: 'auth', description, expectStatus: 200, warmup: 100, measure: { kind: 'rate' },
    dataset, noteBytes: true, check: checkShared, request: () => request,
  };
}

/** The pairs, for tokens minted by the run (`clients` holds one per client of the load). */
export function authPairs(tokens: AuthTokens): AuthPair[] {
  const assets = assetsOf(tokens);
  const create: Scenario = {
    ...CREATE,
    name: 'auth.create',
    group: 'auth',
    description: 'POST /entities, one new Sensor each, by a non-admin subject per client with its own token, against the same creates on a broker without authentication',
    target: { row: 'value', atLeast: 0.85 },
    request: (state, client) => {
      const token = tokens.clients[client];
      if (token === undefined) throw new Error(`no token for client ${client}`);
      return { ...CREATE.request(state, client), headers: bearer(token) };
    },
  };
  const readerQuery = listAssets(
    'auth.query-1pct', `GET /entities?type=Asset&limit=100 by ${READER}, who may read ${SHARED_COUNT} of ${formatCount(ASSET_COUNT)}, against an admin's q=group=="${SHARED_GROUP}" (the same ${SHARED_COUNT})`,
    'type=Asset&limit=100', tokens.reader, assets,
  );
  // NOTE: the admin selects the shared Assets with a q, not an id list: an equality on a string is
  // answered from the attr_values (attr, str) index as a rowid list, the same shape as the reader's
  // permission filter, with a query string of constant size; 100 ids would add a 4 KB query string
  // parsed and validated id by id at the edge, a cost the reader's request does not have.
  const adminQuery = listAssets(
    'auth.query-admin', `GET /entities?type=Asset&q=group=="${SHARED_GROUP}"&limit=100 by an admin`,
    `type=Asset&q=${encodeURIComponent(`group=="${SHARED_GROUP}"`)}&limit=100`, tokens.admin, assets,
  );
  return [
    { subject: create, baseline: CREATE, isBaselineUnauthenticated: true },
    { subject: { ...readerQuery, target: { row: 'value', atLeast: 0.85 } }, baseline: adminQuery, isBaselineUnauthenticated: false },
  ];
}
