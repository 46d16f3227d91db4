/**
 * Block postings (docs/search.md, "Postings"): for each word and block of 65,536 ids, the low 16
 * bits of the ids of the records holding it, as a roaring container: a sorted uint16
 * little-endian array below ARRAY_MAX ids, else a bitmap of BITMAP_BYTES.
 */

/** Ids per block: a record's block is `id >> 16`, its place in the block `id & 0xffff`. */
export const BLOCK_SIZE = 65_536;
/** A container of this many ids or more is a bitmap (then no larger than the array would be). */
export const ARRAY_MAX = 4096;
export const BITMAP_BYTES = BLOCK_SIZE / 8;
/** 32-bit words of a block's bitmap. */
const BLOCK_WORDS = BLOCK_SIZE / 32;

export interface Container {
  /** How many ids it holds. */
  card: number;
  ids: Buffer;
}

export function blockOf(id: number): number {
  return Math.floor(id / BLOCK_SIZE);
}

export function lowOf(id: number): number {
  return id % BLOCK_SIZE;
}

/** The container of these places in a block (sorted, distinct, each below BLOCK_SIZE). */
export function encode(lows: ArrayLike<number>): Container {
  const card = lows.length;
  if (card < ARRAY_MAX) {
    const ids = Buffer.alloc(2 * card);
    for (let i = 0; i < card; i++) ids.writeUInt16LE(lows[i], 2 * i);
    return { card, ids };
  }
  const bits = new Uint32Array(BLOCK_WORDS);
  for (let i = 0; i < card; i++) bits[lows[i] >>> 5] |= 1 << (lows[i] & 31);
  return { card, ids: bitmapBuffer(bits) };
}

/** The places a container holds, ascending. */
export function decode(c: Container): Uint16Array {
  const out = new Uint16Array(c.card);
  if (c.card < ARRAY_MAX) {
    for (let i = 0; i < c.card; i++) out[i] = c.ids[2 * i] | (c.ids[2 * i + 1] << 8);
    return out;
  }
  let n = 0;
  for (let w = 0; w < BLOCK_WORDS; w++) {
    let v = c.ids.readUInt32LE(4 * w);
    while (v) {
      const low = v & -v;
      out[n++] = w * 32 + 31 - Math.clz32(low);
      v ^= low;
    }
  }
  return out;
}

/**
 * The container with `add` put in and `remove` taken out (each sorted and distinct; an id in both
 * ends up in); undefined when it is left empty.
 */
export function change(c: Container | undefined, add: readonly number[], remove: readonly number[]): Container | undefined {
  // An array that stays one is merged as sorted lists: a bulk load changes tens of thousands of
  // small containers a batch, and an 8 KB bitmap for each made indexing CPU-bound.
  if ((c?.card ?? 0) + add.length < ARRAY_MAX) {
    const merged = mergeLows(c ? decode(c) : [], add, remove);
    return merged.length ? encode(merged) : undefined;
  }
  const bits = new Uint32Array(BLOCK_WORDS);
  if (c) orInto(bits, c);
  for (const low of remove) bits[low >>> 5] &= ~(1 << (low & 31));
  for (const low of add) bits[low >>> 5] |= 1 << (low & 31);
  const card = popcount(bits);
  if (!card) return undefined;
  return card >= ARRAY_MAX ? { card, ids: bitmapBuffer(bits) } : encode(places(bits));
}

/** (before − remove) ∪ add, each sorted and distinct. */
function mergeLows(before: ArrayLike<number>, add: readonly number[], remove: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < before.length || j < add.length) {
    const b = i < before.length ? before[i] : BLOCK_SIZE;
    const a = j < add.length ? add[j] : BLOCK_SIZE;
    if (a <= b) {
      out.push(a);
      j++;
      if (a === b) i++;
      continue;
    }
    while (k < remove.length && remove[k] < b) k++;
    if (remove[k] !== b) out.push(b);
    i++;
  }
  return out;
}

function bitmapBuffer(bits: Uint32Array): Buffer {
  const ids = Buffer.alloc(BITMAP_BYTES);
  for (let w = 0; w < BLOCK_WORDS; w++) ids.writeUInt32LE(bits[w] >>> 0, 4 * w);
  return ids;
}

function orInto(bits: Uint32Array, c: Container): void {
  if (c.card < ARRAY_MAX) {
    for (let i = 0; i < c.card; i++) {
      const v = c.ids[2 * i] | (c.ids[2 * i + 1] << 8);
      bits[v >>> 5] |= 1 << (v & 31);
    }
  } else for (let w = 0; w < BLOCK_WORDS; w++) bits[w] |= c.ids.readUInt32LE(4 * w);
}

function popcount(bits: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < bits.length; i++) {
    let v = bits[i];
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    n += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return n;
}

function places(bits: Uint32Array): number[] {
  const out: number[] = [];
  for (let w = 0; w < bits.length; w++) {
    let v = bits[w];
    while (v) {
      const low = v & -v;
      out.push(w * 32 + 31 - Math.clz32(low));
      v ^= low;
    }
  }
  return out;
}

/** A postings row: one word's container in one block. */
export interface PostingsRow extends Container {
  block: number;
}

/**
 * A set of record ids for one search, a bitmap per block that holds any: the OR of a term's
 * words' containers, then the AND across terms.
 */
export class IdSet {
  private readonly blocks = new Map<number, Uint32Array>();

  /** The ids of these containers (one term's words: their union). */
  static of(rows: Iterable<PostingsRow>): IdSet {
    const set = new IdSet();
    for (const r of rows) {
      let bits = set.blocks.get(r.block);
      if (!bits) set.blocks.set(r.block, (bits = new Uint32Array(BLOCK_WORDS)));
      orInto(bits, r);
    }
    return set;
  }

  /** Keeps only the ids `other` holds too. */
  and(other: IdSet): this {
    for (const [block, bits] of this.blocks) {
      const theirs = other.blocks.get(block);
      if (!theirs) {
        this.blocks.delete(block);
        continue;
      }
      for (let w = 0; w < BLOCK_WORDS; w++) bits[w] &= theirs[w];
    }
    return this;
  }

  has(id: number): boolean {
    const bits = this.blocks.get(blockOf(id));
    const low = lowOf(id);
    return bits !== undefined && (bits[low >>> 5] & (1 << (low & 31))) !== 0;
  }

  add(id: number): void {
    let bits = this.blocks.get(blockOf(id));
    if (!bits) this.blocks.set(blockOf(id), (bits = new Uint32Array(BLOCK_WORDS)));
    const low = lowOf(id);
    bits[low >>> 5] |= 1 << (low & 31);
  }

  delete(id: number): void {
    const bits = this.blocks.get(blockOf(id));
    const low = lowOf(id);
    if (bits) bits[low >>> 5] &= ~(1 << (low & 31));
  }

  get size(): number {
    let n = 0;
    for (const bits of this.blocks.values()) n += popcount(bits);
    return n;
  }

  /** Its ids ascending, or undefined when there are more than `limit`. */
  ids(limit = Infinity): number[] | undefined {
    const out: number[] = [];
    for (const block of [...this.blocks.keys()].sort((a, b) => a - b)) {
      const base = block * BLOCK_SIZE;
      for (const low of places(this.blocks.get(block)!)) {
        if (out.length >= limit) return undefined;
        out.push(base + low);
      }
    }
    return out;
  }
}
