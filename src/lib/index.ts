// Helpers with no knowledge of NGSI-LD: logging, time, ids.
export * from './log.js';
export * from './clock.js';
export * from './stream.js';
export * from './lru.js';
export * from './generations.js';
export * from './deadline.js';
export * from './memo.js';
export * from './host-allow-list.js';
export * from './outbound-fetch.js';
export * from './login-limiter.js';
export * from './request-budget.js';
export type * from './context-records.js';
export type * from './identity-records.js';
export type * from './mqtt-session-records.js';
export * from './tls-files.js';
export * from './http-transport.js';
export * from './client-credentials.js';
