// The keys of the set index: which sets of ids a record belongs to, from its search fields as
// folded. Pure: the same cuts serve the indexer, the planner and the tests.

/** Characters that end a word: anything but a letter, a mark or a digit. */
export const WORD_BREAK = /[^\p{L}\p{M}\p{N}]/u;
const WORDS = /[\p{L}\p{M}\p{N}]+/gu;

/** Grams of up to this many characters (code points) have a set each. */
export const MAX_GRAM = 3;

/**
 * Words longer than this are kept as overlapping pieces, so that a key stays short enough for a
 * primary key and any term of up to WORD_OVERLAP characters still lies whole inside one piece.
 */
export const WORD_PIECE = 400;
export const WORD_OVERLAP = 200;

/** Key prefixes: a gram, a word, a pair of adjacent words with what separates them. */
export const GRAM = 'g';
export const WORD = 'w';
export const PAIR = 'p';

/** The grams of 1 to MAX_GRAM characters in a folded text. */
export function gramsOf(folded: string, into: Set<string> = new Set()): Set<string> {
  const chars = [...folded];
  for (let i = 0; i < chars.length; i++) {
    let gram = '';
    for (let n = 0; n < MAX_GRAM && i + n < chars.length; n++) {
      gram += chars[i + n];
      into.add(gram);
    }
  }
  return into;
}

/** A word as the index holds it: itself, or overlapping pieces when it is very long. */
export function wordPieces(word: string): string[] {
  const chars = [...word];
  if (chars.length <= WORD_PIECE) return [word];
  const out: string[] = [];
  for (let at = 0; ; at += WORD_PIECE - WORD_OVERLAP) {
    out.push(chars.slice(at, at + WORD_PIECE).join(''));
    if (at + WORD_PIECE >= chars.length) break;
  }
  return out;
}

/** The words of a folded text in order, each with where it ends. */
export function wordsOf(folded: string): { word: string; end: number }[] {
  const out: { word: string; end: number }[] = [];
  for (const m of folded.matchAll(WORDS)) out.push({ word: m[0], end: m.index + m[0].length });
  return out;
}

/** Words and separators are runs of different characters, so the three joined name one pair. */
export function pairKey(first: string, between: string, second: string): string {
  return PAIR + first + between + second;
}

/** Characters a gatherer numbers; grams of others go by name. */
const ALPHABET = 1023;

/** A growable array of 32-bit integers. */
class Ints {
  data = new Int32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const data = new Int32Array(this.data.length * 2);
      data.set(this.data);
      this.data = data;
    }
    this.data[this.length++] = value;
  }
}

/**
 * Gathers the keys of records given in increasing id order, then hands out each key's ids. Each
 * key gets a slot; a record appends the slots it holds, once each, and `drain` groups them by
 * slot in one counting pass: a list per key cost most of the time in cache misses.
 */
export class KeyGatherer {
  /** Grams of one or two characters: slot + 1 by code (0: none yet). */
  private shortSlot = new Int32Array(1 << 14);
  /** Grams of three characters, by code, and named keys (words, pairs, other grams). */
  private readonly gramSlot = new Map<number, number>();
  private readonly namedSlot = new Map<string, number>();
  /** Per slot: the key (a gram's code, or the key itself) and the last record that held it. */
  private slotKey: (number | string)[] = [];
  private slotLast = new Ints();
  /** The records' slots, one record after another, and where each record's start. */
  private readonly entries = new Ints();
  private readonly ids = new Ints();
  private readonly starts = new Ints();
  /** Per UTF-16 code unit, its number (0: none yet). */
  private readonly numbers = new Uint16Array(65536);
  private readonly chars: string[] = [];

  constructor(private readonly pairable: (word: string) => boolean = () => false) {}

  /** Adds a record's folded fields; ids must increase from one call to the next. */
  add(id: number, folded: readonly string[]): void {
    this.ids.push(id);
    this.starts.push(this.entries.length);
    for (const text of folded) {
      this.addGrams(id, text);
      const words = wordsOf(text);
      for (const { word } of words) for (const piece of wordPieces(word)) this.addNamed(id, WORD + piece);
      for (let i = 0; i + 1 < words.length; i++) {
        const a = words[i];
        const b = words[i + 1];
        if (this.pairable(a.word) && this.pairable(b.word))
          this.addNamed(id, pairKey(a.word, text.slice(a.end, b.end - b.word.length), b.word));
      }
    }
  }

  /** Every key with its ids in increasing order, then forgets the records (not the numbering). */
  *drain(): Generator<[string, Uint32Array]> {
    const slots = this.slotKey.length;
    const offsets = new Int32Array(slots + 1);
    const entries = this.entries.data;
    const n = this.entries.length;
    for (let e = 0; e < n; e++) offsets[entries[e] + 1]++;
    for (let s = 0; s < slots; s++) offsets[s + 1] += offsets[s];
    const grouped = new Uint32Array(n);
    const fill = offsets.slice(0, slots);
    const records = this.ids.length;
    for (let r = 0; r < records; r++) {
      const id = this.ids.data[r];
      const end = r + 1 < records ? this.starts.data[r + 1] : n;
      for (let e = this.starts.data[r]; e < end; e++) grouped[fill[entries[e]]++] = id;
    }
    const keys = this.slotKey;
    this.slotKey = [];
    this.slotLast = new Ints();
    this.shortSlot.fill(0);
    this.gramSlot.clear();
    this.namedSlot.clear();
    this.entries.length = this.ids.length = this.starts.length = 0;
    for (let s = 0; s < slots; s++) {
      const key = keys[s];
      yield [typeof key === 'string' ? key : GRAM + this.gramOfCode(key), grouped.subarray(offsets[s], offsets[s + 1])];
    }
  }

  private addGrams(id: number, text: string): void {
    if (SURROGATE.test(text) || !this.numbered(text)) {
      // Rare: characters past U+FFFF (or lone halves), or more characters than numbers.
      // A gram with a number goes under it, so that one gram never has two slots.
      for (const gram of gramsOf(text)) {
        if (SURROGATE.test(gram) || !this.numbered(gram)) this.addNamed(id, GRAM + gram);
        else {
          let code = 0;
          for (let i = 0; i < gram.length; i++) code = (code << 10) | this.numbers[gram.charCodeAt(i)];
          if (gram.length < 3) this.addShort(id, code);
          else this.addGram(id, code);
        }
      }
      return;
    }
    const numbers = this.numbers;
    // c1, c2: the numbers of the two characters before this one (0: none).
    let c1 = 0;
    let c2 = 0;
    for (let i = 0; i < text.length; i++) {
      const c = numbers[text.charCodeAt(i)];
      this.addShort(id, c);
      if (c1) this.addShort(id, (c1 << 10) | c);
      if (c2) this.addGram(id, (((c2 << 10) | c1) << 10) | c);
      c2 = c1;
      c1 = c;
    }
  }

  /** Numbers every character of the text; false when the numbers ran out. */
  private numbered(text: string): boolean {
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      if (this.numbers[unit]) continue;
      if (this.chars.length >= ALPHABET) return false;
      this.chars.push(text[i]);
      this.numbers[unit] = this.chars.length;
    }
    return true;
  }

  private gramOfCode(code: number): string {
    let gram = '';
    for (; code > 0; code >>>= 10) gram = this.chars[(code & 1023) - 1] + gram;
    return gram;
  }

  private addShort(id: number, code: number): void {
    if (code >= this.shortSlot.length) {
      const grown = new Int32Array(Math.max(code + 1, 2 * this.shortSlot.length));
      grown.set(this.shortSlot);
      this.shortSlot = grown;
    }
    let slot = this.shortSlot[code] - 1;
    if (slot < 0) {
      slot = this.newSlot(code);
      this.shortSlot[code] = slot + 1;
    }
    this.hold(id, slot);
  }

  private addGram(id: number, code: number): void {
    let slot = this.gramSlot.get(code);
    if (slot === undefined) this.gramSlot.set(code, (slot = this.newSlot(code)));
    this.hold(id, slot);
  }

  private addNamed(id: number, key: string): void {
    let slot = this.namedSlot.get(key);
    if (slot === undefined) this.namedSlot.set(key, (slot = this.newSlot(key)));
    this.hold(id, slot);
  }

  private newSlot(key: number | string): number {
    this.slotKey.push(key);
    this.slotLast.push(0);
    return this.slotKey.length - 1;
  }

  /** The record holds the slot's key: noted once per record. */
  private hold(id: number, slot: number): void {
    if (this.slotLast.data[slot] === id) return;
    this.slotLast.data[slot] = id;
    this.entries.push(slot);
  }
}

const SURROGATE = /[\uD800-\uDFFF]/;
