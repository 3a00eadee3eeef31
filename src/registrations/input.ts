// A context source registration as the HTTP edge hands it over: its JSON structure checked, its
// NGSI-LD rules not yet (parse.ts). `null` members come from a merge-patch (remove the member).

import type { Json } from '../ngsi/index.js';

export interface EntityInfoInput {
  id?: string;
  idPattern?: string;
  type?: string;
}

export interface RegistrationInfoInput {
  entities?: EntityInfoInput[];
  propertyNames?: string[];
  relationshipNames?: string[];
}

export interface TimeIntervalInput {
  startAt?: string;
  endAt?: string;
}

export interface ManagementInput {
  localOnly?: boolean;
  cacheDuration?: string;
  timeout?: number;
  cooldown?: number;
}

/** The members of NGSI-LD §5.2.9 that edgeld reads; every other member is an additional property. */
export interface RegistrationInput {
  id?: string;
  type?: string;
  registrationName?: string | null;
  description?: string | null;
  information?: RegistrationInfoInput[] | null;
  tenant?: string | null;
  observationInterval?: TimeIntervalInput | null;
  managementInterval?: TimeIntervalInput | null;
  location?: Json;
  observationSpace?: Json;
  operationSpace?: Json;
  expiresAt?: string | null;
  endpoint?: string | null;
  contextSourceInfo?: Array<{ key: string; value: string }> | null;
  scope?: string | string[] | null;
  mode?: string | null;
  operations?: string[] | null;
  management?: ManagementInput | null;
  /** Additional registration properties, compact names as written. */
  properties: Record<string, Json>;
}

/** Members that only the broker writes. */
export const READ_ONLY_MEMBERS = ['createdAt', 'modifiedAt', 'status'] as const;
