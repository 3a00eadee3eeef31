// The NGSI-LD error catalogue: one Error subclass per ETSI error type (NGSI-LD §5.5.2).
// Every failure the API reports is one of these; http/problem.ts renders them as ProblemDetails.

export const ERROR_TYPE_BASE = 'https://uri.etsi.org/ngsi-ld/errors/';

export abstract class NgsiError extends Error {
  override name = 'NgsiError';
  abstract readonly errorType: string;
  abstract readonly status: number;
  readonly detail: string | undefined;

  constructor(title: string, detail?: string, options?: { cause?: unknown }) {
    super(title, options);
    this.detail = detail;
  }

  get typeUri(): string {
    return ERROR_TYPE_BASE + this.errorType;
  }
}

export class InvalidRequestError extends NgsiError {
  override name = 'InvalidRequestError';
  readonly errorType = 'InvalidRequest';
  readonly status = 400;
}

export class BadRequestDataError extends NgsiError {
  override name = 'BadRequestDataError';
  readonly errorType = 'BadRequestData';
  readonly status = 400;
}

export class AlreadyExistsError extends NgsiError {
  override name = 'AlreadyExistsError';
  readonly errorType = 'AlreadyExists';
  readonly status = 409;
}

/** NGSI-LD §5.9.2.4: a context source registration that would clash with another one or with local data. */
export class ConflictError extends NgsiError {
  override name = 'ConflictError';
  readonly errorType = 'Conflict';
  readonly status = 409;
}

export class OperationNotSupportedError extends NgsiError {
  override name = 'OperationNotSupportedError';
  readonly errorType = 'OperationNotSupported';
  readonly status = 422;
}

export class ResourceNotFoundError extends NgsiError {
  override name = 'ResourceNotFoundError';
  readonly errorType = 'ResourceNotFound';
  readonly status = 404;
}

export class AccessDeniedError extends NgsiError {
  override name = 'AccessDeniedError';
  readonly errorType = 'AccessDenied';
  readonly status = 403;
}

export class TooManyResultsError extends NgsiError {
  override name = 'TooManyResultsError';
  readonly errorType = 'TooManyResults';
  readonly status = 403;
}

export class TooComplexQueryError extends NgsiError {
  override name = 'TooComplexQueryError';
  readonly errorType = 'TooComplexQuery';
  readonly status = 403;
}

export class LdContextNotAvailableError extends NgsiError {
  override name = 'LdContextNotAvailableError';
  readonly errorType = 'LdContextNotAvailable';
  readonly status = 503;
}

export class NotImplementedError extends NgsiError {
  override name = 'NotImplementedError';
  readonly errorType = 'NotImplemented';
  readonly status = 501;
}

export class UnauthorizedError extends NgsiError {
  override name = 'UnauthorizedError';
  readonly errorType = 'Unauthorized';
  readonly status = 401;
}

export class InternalError extends NgsiError {
  override name = 'InternalError';
  readonly errorType = 'InternalError';
  readonly status = 500;
}

/** Errors outside the ETSI catalogue that HTTP still needs: media types and sizes. */
export class NotAcceptableError extends NgsiError {
  override name = 'NotAcceptableError';
  readonly errorType = 'NotAcceptable';
  readonly status = 406;
}

export class UnsupportedMediaTypeError extends NgsiError {
  override name = 'UnsupportedMediaTypeError';
  readonly errorType = 'UnsupportedMediaType';
  readonly status = 415;
}

export class PayloadTooLargeError extends NgsiError {
  override name = 'PayloadTooLargeError';
  readonly errorType = 'PayloadTooLarge';
  readonly status = 413;
}

export class MethodNotAllowedError extends NgsiError {
  override name = 'MethodNotAllowedError';
  readonly errorType = 'MethodNotAllowed';
  readonly status = 405;
  /** The methods the resource supports, for the `Allow` header. */
  allow: readonly string[] = [];
}

export class RequestHeaderFieldsTooLargeError extends NgsiError {
  override name = 'RequestHeaderFieldsTooLargeError';
  readonly errorType = 'RequestHeaderFieldsTooLarge';
  readonly status = 431;
}

export class RequestTimeoutError extends NgsiError {
  override name = 'RequestTimeoutError';
  readonly errorType = 'RequestTimeout';
  readonly status = 408;
}

/** A subject over its request budget (edgeld, not ETSI: RFC 6585 §4 429), with when to come back. */
export class TooManyRequestsError extends NgsiError {
  override name = 'TooManyRequestsError';
  readonly errorType = 'TooManyRequests';
  readonly status = 429;
  /** Whole seconds until a request is allowed again (the Retry-After header, RFC 9110 §10.2.3). */
  retryAfter = 1;
}

/** NGSI-LD §6.3.18: a forwarded request came back to this broker (its own identifier in `Via`). */
export class LoopDetectedError extends NgsiError {
  override name = 'LoopDetectedError';
  readonly errorType = 'LoopDetected';
  readonly status = 508;
}

/** The file system of the database is nearly full (edgeld, not ETSI: RFC 4918 §11.5 507). */
export class InsufficientStorageError extends NgsiError {
  override name = 'InsufficientStorageError';
  readonly errorType = 'InsufficientStorage';
  readonly status = 507;
}

/** When each error is used; the error table of docs/api.md is rendered from this catalogue. */
const WHEN: Record<string, string> = {
  InvalidRequest: 'malformed JSON, unknown or repeated query parameter, bad parameter syntax, body not an array for batches',
  BadRequestData: 'well-formed JSON but invalid NGSI-LD content: invalid id or name, JSON null, NGSI-LD Null on create, bad @context or Link header, id mismatch; a negative `limit` or `offset`',
  AlreadyExists: 'an entity, a subscription or a context source registration with that id exists',
  Conflict: 'a context source registration overlapping an exclusive or redirect one for the same entity id and attribute, or local data it would hide',
  OperationNotSupported: 'an operation that cannot apply to the data, e.g. aggregation over values of mixed kinds',
  ResourceNotFound: 'missing entity, attribute, datasetId, @context, subscription or path',
  AccessDenied: 'authenticated but not permitted',
  TooManyResults: '`limit` above `pagination.limit-max`',
  TooComplexQuery: 'q or geometry over the complexity limits',
  LdContextNotAvailable: 'a remote @context cannot be loaded (host not allowed, unreachable, timeout, too large, not JSON, remote contexts off; one detail for all)',
  NotImplemented: 'a known NGSI-LD parameter or member edgeld does not implement; an HTTP method edgeld does not know',
  Unauthorized: 'authentication enabled and the token is missing or invalid (with `WWW-Authenticate: Bearer`)',
  InternalError: 'anything unexpected; logged with the request id',
  NotAcceptable: '`Accept` offers no supported media type',
  UnsupportedMediaType: 'request body with a Content-Type other than application/json or application/ld+json, or a Content-Encoding other than gzip',
  PayloadTooLarge: 'request body over `http.body-limit` (a gzip body: once inflated)',
  MethodNotAllowed: 'a method the path does not support (with `Allow`)',
  RequestHeaderFieldsTooLarge: 'request line and headers over 16 KiB (Node\'s limit)',
  RequestTimeout: 'a request not received whole within the server\'s request timeout',
  TooManyRequests: 'a subject over `application.budget.requests-per-minute` (with `Retry-After`)',
  LoopDetected: 'a request whose `Via` already names this broker, which it would forward to an exclusive or redirect context source',
  InsufficientStorage: 'a write while the database\'s disk has less than `storage.min-free-bytes` free; reads keep working',
};

/** The catalogue as data, for the table of docs/api.md and its check. */
export const ERROR_CATALOGUE: ReadonlyArray<{ type: string; status: number; when: string }> = [
  InvalidRequestError, BadRequestDataError, AlreadyExistsError, ConflictError, OperationNotSupportedError,
  ResourceNotFoundError, AccessDeniedError, TooManyResultsError, TooComplexQueryError,
  LdContextNotAvailableError, NotImplementedError, UnauthorizedError, InternalError,
  NotAcceptableError, UnsupportedMediaTypeError, PayloadTooLargeError, MethodNotAllowedError,
  RequestHeaderFieldsTooLargeError, RequestTimeoutError, TooManyRequestsError, LoopDetectedError, InsufficientStorageError,
].map((Ctor) => {
  const e = new Ctor('');
  return { type: e.errorType, status: e.status, when: WHEN[e.errorType] ?? '' };
});

/** The error table of docs/api.md (Markdown), rendered from the catalogue. */
export function renderErrorsMarkdown(): string {
  const rows = ERROR_CATALOGUE.map((e) => `| \`${e.type}\` | ${e.status} | ${e.when} |`);
  return ['| Type | Status | When |', '|---|---|---|', ...rows].join('\n');
}
