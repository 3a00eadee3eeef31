// Failures of the upstream link: the drain keeps what it was sending and tries again later.

/** The upstream could not be reached, did not answer in time, or answered what the drain cannot use. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
}
