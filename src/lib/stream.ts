// Reading a web stream whole with a size cap, without buffering past the cap.

/**
 * The stream's bytes, or `undefined` once more than `limit` bytes arrive. What comes after the limit
 * is read and dropped up to `discardUpTo` bytes in all (so the sender finishes and can read an answer),
 * then the stream is cancelled.
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array>, limit: number, discardUpTo = limit,
): Promise<Buffer | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > discardUpTo) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    if (size <= limit) chunks.push(value);
    else chunks.length = 0;
  }
  return size > limit ? undefined : Buffer.concat(chunks);
}
