// Reading a web stream whole with a size cap, without buffering past the cap.

/** The stream's bytes, or `undefined` once more than `limit` bytes arrive (the stream is cancelled). */
export async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Buffer | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
