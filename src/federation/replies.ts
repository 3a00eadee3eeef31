// Upstream replies are untrusted input: the shapes the drain reads of them, checked with zod. A reply
// of another shape is an upstream failure (recorded, retried later), never a crash.

import { z } from 'zod';

/** ProblemDetails (NGSI-LD §5.5.3, RFC 7807), loosely: only what the drain reports of it. */
export const PROBLEM = z.looseObject({
  type: z.string().max(2_048).optional(),
  title: z.string().max(2_048).optional(),
  status: z.int().min(100).max(599).optional(),
  detail: z.string().optional(),
});
export type Problem = z.infer<typeof PROBLEM>;

/** A BatchOperationResult (NGSI-LD §5.2.16) of a 207. */
export const BATCH_RESULT = z.object({
  success: z.array(z.string()).max(10_000),
  errors: z.array(z.object({ entityId: z.unknown(), error: PROBLEM })).max(10_000),
});
export type BatchResult = z.infer<typeof BATCH_RESULT>;

/** One instance of an attribute in a normalized entity: what reconciling reads of it. */
const INSTANCE = z.looseObject({ observedAt: z.string().optional(), datasetId: z.string().optional() });

/** Entities as a query answers them (normalized): id and the instances of each attribute. */
export const ENTITY_LIST = z.array(z.looseObject({
  id: z.string(),
  // NOTE: other members (type, scope, @context) are strings or arrays of strings; they are ignored.
})).max(10_000).transform((list) => list.map((e) => {
  const attrs = new Map<string, Array<z.infer<typeof INSTANCE>>>();
  for (const [name, value] of Object.entries(e)) {
    const parsed = z.union([INSTANCE, z.array(INSTANCE)]).safeParse(value);
    if (parsed.success && typeof value === 'object') attrs.set(name, Array.isArray(parsed.data) ? parsed.data : [parsed.data]);
  }
  return { id: e.id, attrs };
}));

/** A short text of an untrusted reply for the logs and the status (bounded, one line). */
export function describeReply(status: number, body: unknown, text: string): string {
  const problem = PROBLEM.safeParse(body);
  const what = problem.success && (problem.data.title !== undefined || problem.data.detail !== undefined)
    ? [problem.data.title, problem.data.detail].filter((x) => x !== undefined).join(': ')
    : text;
  return `${status} ${what.replace(/\s+/g, ' ').slice(0, 300)}`.trim();
}
