import { readBody, readBodyFrom, type ReadBodyResult } from '../../../src/domain/body';
import { scanObject, type ScanLimits } from '../../../src/domain/json-scan';
import { scanObjectFrom, type ByteSource } from '../../../src/domain/json-scan-stream';

/**
 * The two scanners (in memory, and piece by piece from a source) run on the same bytes, each result
 * written as text, for tests that hold them to the same answer at a limit.
 */

const MEMBER = 'ScheduledItems';

/** A source that spoils each block it handed out once the next is asked for (a reused read buffer). */
export function sourceOf(bytes: Buffer): ByteSource {
  let last: Buffer | null = null;
  return {
    length: bytes.length,
    read: (start, end) => {
      if (!(start >= 0 && start <= end && end <= bytes.length)) throw new RangeError(`read ${start}..${end} of ${bytes.length}`);
      last?.fill(0xff);
      last = Buffer.from(bytes.subarray(start, end));
      return last;
    },
  };
}

/** The bytes as a source that hands out views of them, as a body file read block by block does. */
export function bytesSource(bytes: Buffer): ByteSource {
  return { length: bytes.length, read: (start, end) => bytes.subarray(start, end) };
}

/** The receiver's two readers of a body, checking every item, for tests that hold them to one answer. */
export const BODY_READERS = [
  ['in memory', (raw: Buffer): ReadBodyResult => readBody(raw, { checkItems: true })],
  ['from a file, piece by piece', (raw: Buffer): ReadBodyResult => readBodyFrom(bytesSource(raw), { checkItems: true, block: 16 })],
] as const;

/** A member name's JSON text as its string. */
export const decode = (text: string): string => {
  const key = JSON.parse(text) as unknown;
  if (typeof key !== 'string') throw new SyntaxError('not a string key');
  return key;
};

/** What `f` returns as JSON, or its error's class and message. */
export function outcome(f: () => unknown): string {
  try {
    return `ok ${JSON.stringify(f())}`;
  } catch (err) {
    return `${(err as Error).constructor.name}: ${(err as Error).message}`;
  }
}

/** The in-memory scanner's answer. */
export function whole(bytes: Buffer, limits: ScanLimits): string {
  return outcome(() => {
    const s = scanObject(bytes, MEMBER, (span) => decode(bytes.toString('utf8', span.start, span.end)), limits);
    return { members: [...s.members], elements: s.elements };
  });
}

/** The streamed scanner's answer, reading `block` bytes at a time. */
export function pieces(bytes: Buffer, limits: ScanLimits, block: number): string {
  return outcome(() => {
    const s = scanObjectFrom(sourceOf(bytes), MEMBER, decode, block, limits);
    return { members: [...s.members], elements: s.elements };
  });
}
