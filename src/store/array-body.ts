/** The streamed reading of a 2xx body that is a JSON array (`Transport.streamArray`). */
import { StoreBadResponseError } from './errors.js';
import { JsonArrayReader } from './json-array.js';
import type { ElementVisitor } from './request.js';

/**
 * Reads a 2xx body: a JSON array is parsed as it streams in and each element handed to `visit` (the
 * parser keeps none of them); any other body is returned as text (small: an object, a message) for
 * the usual reading. Malformed JSON is a StoreBadResponseError; an error of `visit` passes through.
 * `betweenChunks` (see `StreamOptions`) may hold the next chunk back.
 */
export async function parseArrayBody(body: AsyncIterable<Uint8Array>, visit: ElementVisitor, endpoint: string, betweenChunks?: () => Promise<void> | undefined): Promise<string | undefined> {
  let parser: JsonArrayReader | undefined;
  let other: Uint8Array[] | undefined;
  const pending: Uint8Array[] = [];
  let index = 0;
  let visitError: unknown;
  const write = (chunk: Uint8Array): void => {
    try {
      parser?.write(chunk);
    } catch (error) {
      if (error === visitError) throw error;
      throw new StoreBadResponseError(`response is not JSON (${error instanceof Error ? error.message : String(error)})`, { endpoint });
    }
  };
  for await (const chunk of body) {
    if (parser) {
      write(chunk);
      const wait = betweenChunks?.();
      if (wait !== undefined) await wait;
    } else if (other) other.push(chunk);
    else {
      pending.push(chunk);
      const first = chunk.find((byte) => byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09);
      if (first === undefined) continue;
      if (first !== 0x5b /* [ */) {
        other = pending;
        continue;
      }
      parser = new JsonArrayReader((element) => {
        try {
          visit(element, index++);
        } catch (error) {
          visitError = error;
          throw error;
        }
      });
      for (const early of pending.splice(0)) write(early);
    }
  }
  if (parser) {
    // The parser ends by itself with the array's closing bracket; a body that stops before is cut short.
    if (!parser.isEnded) throw new StoreBadResponseError('response is not JSON (the array is cut short)', { endpoint });
    return undefined;
  }
  return Buffer.concat(other ?? pending).toString('utf8');
}
