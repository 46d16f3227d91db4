// The words that have sets, and which of them hold a fragment of a term. Scanning 300,000 words
// (1,000,000 posts) took about 5 ms a term, most of a keystroke's cost: the words holding each
// gram of 3 characters are listed once, and a fragment's rarest gram names the few to test.

/** Characters per listed gram. */
const GRAM = 3;

/** Per gram, the positions of the words holding it; shared by every version of one vocabulary. */
class GramLists {
  readonly lists = new Map<string, number[]>();
  /** Words listed so far: a vocabulary only grows, so its first words are every version's. */
  covered = 0;

  cover(words: readonly string[]): void {
    for (; this.covered < words.length; this.covered++) {
      const chars = [...words[this.covered]];
      const seen = new Set<string>();
      for (let i = 0; i + GRAM <= chars.length; i++) {
        const gram = chars.slice(i, i + GRAM).join('');
        if (seen.has(gram)) continue;
        seen.add(gram);
        const list = this.lists.get(gram);
        if (list) list.push(this.covered);
        else this.lists.set(gram, [this.covered]);
      }
    }
  }
}

export class Vocabulary {
  private constructor(
    readonly words: readonly string[],
    private readonly grams: GramLists,
  ) {}

  static of(words: readonly string[]): Vocabulary {
    return new Vocabulary(words, new GramLists());
  }

  /** This vocabulary with `more` words after its own (a new object: readers keep theirs). */
  with(more: readonly string[]): Vocabulary {
    return new Vocabulary([...this.words, ...more], this.grams);
  }

  /** The words that hold `fragment` and pass `test`. */
  holding(fragment: string, test: (word: string) => boolean = () => true): string[] {
    const chars = [...fragment];
    const passes = (w: string) => w.includes(fragment) && test(w);
    // The gram lists are built on the first look-up that can use them.
    if (chars.length < GRAM) return this.words.filter(passes);
    this.grams.cover(this.words);
    let rarest: readonly number[] | undefined;
    for (let i = 0; i + GRAM <= chars.length; i++) {
      const list = this.grams.lists.get(chars.slice(i, i + GRAM).join('')) ?? [];
      if (!rarest || list.length < rarest.length) rarest = list;
      if (!rarest.length) return [];
    }
    const out: string[] = [];
    // Positions past this version's words belong to a later one.
    for (const at of rarest!) if (at < this.words.length && passes(this.words[at])) out.push(this.words[at]);
    return out;
  }
}
