// Reads an import's file as UTF-8 lines, refusing bytes that are not UTF-8: a stream's 'utf8'
// encoding would turn them into U+FFFD, and the import would store other text than the file
// holds, without a word (the HTTP API refuses such a body). Each chunk is decoded at once, so
// the check costs nothing per line; only a chunk that fails is gone through line by line.
import { createReadStream } from 'node:fs';

const LF = 0x0a;
const CR = 0x0d;
/** Where readline ends a line (as the import read before): \n, \r\n, or a lone \r. */
const LINE_END = /\r?\n|\r(?!\n)/;
// ignoreBOM keeps a byte order mark in the text, as readline did: the first line is then no JSON.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The line after the last one given runs on past the most bytes a line may have. */
export class LineTooLong extends Error {}

/**
 * The file's lines (\n, \r\n or \r), a chunk at a time; a line that is not UTF-8 is undefined
 * and the last given. Memory holds a chunk and one line, which may not pass `maxLineBytes`
 * (LineTooLong), so a file with no line end is never read whole.
 */
export async function* utf8Lines(file: string, maxLineBytes = Infinity): AsyncGenerator<(string | undefined)[]> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    const end = wholeLines(chunk);
    if (end === 0) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes > maxLineBytes) throw new LineTooLong();
      continue;
    }
    const lines = decoded(Buffer.concat([...pending, chunk.subarray(0, end)]));
    pending = [chunk.subarray(end)];
    pendingBytes = chunk.length - end;
    yield lines;
    if (lines[lines.length - 1] === undefined) return;
  }
  const last = Buffer.concat(pending);
  if (last.length) yield decoded(last);
}

/**
 * Where the chunk's whole lines end: after its last \n, or after a later \r that is not its last
 * byte (a lone \r; one that is may be the start of a \r\n that the next chunk ends), 0 when it
 * holds no line end. A byte below 0x80 is never part of a longer character, so no character is
 * cut in two.
 */
function wholeLines(chunk: Buffer): number {
  const lf = chunk.lastIndexOf(LF) + 1;
  const cr = chunk.length > 1 ? chunk.lastIndexOf(CR, chunk.length - 2) + 1 : 0;
  return Math.max(lf, cr);
}

/** The lines of whole lines' bytes (the file's last may have no line end). */
function decoded(bytes: Buffer): (string | undefined)[] {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return upToNotUtf8(bytes);
  }
  const lines = text.split(LINE_END);
  // What follows the last line end is no line.
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Bytes that hold something not UTF-8: their lines one at a time, up to the first bad one. */
function upToNotUtf8(bytes: Buffer): (string | undefined)[] {
  const lines: (string | undefined)[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== LF && bytes[i] !== CR) continue;
    lines.push(utf8(bytes.subarray(start, i)));
    if (lines[lines.length - 1] === undefined) return lines;
    if (bytes[i] === CR && bytes[i + 1] === LF) i++;
    start = i + 1;
  }
  lines.push(utf8(bytes.subarray(start)));
  return lines;
}

function utf8(bytes: Buffer): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The file's text a chunk at a time, each piece whole characters (a character that a chunk ends
 * inside goes with the next). Bytes that are not UTF-8 end it: the text up to the line that holds
 * them, then undefined, so that the reader can say on which line they are.
 */
export async function* utf8Text(file: string): AsyncGenerator<string | undefined> {
  let carry: Buffer | undefined;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    const bytes = carry?.length ? Buffer.concat([carry, chunk]) : chunk;
    const end = wholeCharacters(bytes);
    carry = bytes.subarray(end);
    const pieces = utf8Pieces(bytes.subarray(0, end));
    yield* pieces;
    if (pieces[pieces.length - 1] === undefined) return;
  }
  // A character cut short by the end of the file is not UTF-8.
  if (carry?.length) yield* utf8Pieces(carry);
}

/** Where the bytes' last whole character ends: before a lead byte whose continuation bytes are still to come. */
export function wholeCharacters(bytes: Buffer): number {
  let i = bytes.length - 1;
  while (i >= 0 && bytes.length - i <= 3 && (bytes[i] & 0xc0) === 0x80) i--;
  if (i < 0) return bytes.length;
  const lead = bytes[i];
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length > bytes.length - i ? i : bytes.length;
}

/**
 * The text of whole characters' bytes, as one piece; where some are not UTF-8, the text before
 * the line that holds the first (in pieces that end at \r or \n), then undefined.
 */
export function utf8Pieces(bytes: Buffer): (string | undefined)[] {
  const whole = utf8(bytes);
  if (whole !== undefined) return [whole];
  const pieces: (string | undefined)[] = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== LF && bytes[i] !== CR) continue;
    // \r and \n are never part of a longer character: each line decodes alone.
    const piece = utf8(bytes.subarray(start, i + 1));
    pieces.push(piece);
    if (piece === undefined) break;
    start = i + 1;
  }
  return pieces;
}
