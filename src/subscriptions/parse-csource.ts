// The members only context source registration subscriptions have (NGSI-LD §5.2.12 csf, temporalQ)
// and the rules that set them apart from entity subscriptions (§5.11.2).

import { parseDateTime } from '../ngsi/index.js';
import type { TemporalQInput } from './input.js';
import type { Subscription, SubscriptionTemporalQ } from './model.js';
import { invalidMember } from './parse-members.js';

const TIMERELS = ['before', 'after', 'between'] as const;
const TIME_PROPERTIES = ['observedAt', 'createdAt', 'modifiedAt'] as const;

const isOneOf = <T extends string>(list: readonly T[], value: string): value is T => (list as readonly string[]).includes(value);

function instant(member: string, text: string | undefined): string {
  if (text === undefined) throw invalidMember(`temporalQ.${member}`, `${member} is required`);
  if (parseDateTime(text) === undefined) throw invalidMember(`temporalQ.${member}`, `'${text}' is not an ISO 8601 date-time`);
  return text;
}

/** NGSI-LD §5.2.21 TemporalQuery: timerel and timeAt, endTimeAt for between; timeproperty observedAt by default. */
export function parseTemporalQ(input: TemporalQInput): SubscriptionTemporalQ {
  const { timerel, timeproperty = 'observedAt' } = input;
  if (timerel === undefined || !isOneOf(TIMERELS, timerel)) throw invalidMember('temporalQ.timerel', `'${String(timerel)}' is not one of ${TIMERELS.join(', ')}`);
  if (!isOneOf(TIME_PROPERTIES, timeproperty)) throw invalidMember('temporalQ.timeproperty', `'${timeproperty}' is not one of ${TIME_PROPERTIES.join(', ')}`);
  const out: SubscriptionTemporalQ = { timerel, timeAt: instant('timeAt', input.timeAt), timeproperty };
  if (timerel === 'between') out.endTimeAt = instant('endTimeAt', input.endTimeAt);
  return out;
}

/**
 * NGSI-LD §5.11.2: a registration subscription notifies of registrations, so the members that
 * describe entity notifications have no meaning there.
 */
export function checkCsourceSubscription(sub: Subscription): void {
  if (sub.notificationTrigger !== undefined) throw invalidMember('notificationTrigger', 'not a member of a context source registration subscription');
  if (sub.datasetId !== undefined) throw invalidMember('datasetId', 'not a member of a context source registration subscription');
}

/** Registration-only members given to an entity subscription. */
export function checkEntitySubscription(sub: Subscription): void {
  if (sub.csf !== undefined) throw invalidMember('csf', 'only a context source registration subscription has csf');
  if (sub.temporalQ !== undefined) throw invalidMember('temporalQ', 'only a context source registration subscription has temporalQ');
}
