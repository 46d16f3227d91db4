// `npx tsx scripts/bench/corpus-file.ts --count 1000000 > posts.jsonl`: the benchmark's realistic
// posts (corpus.ts) as NDJSON for `npm run import`, with their created_at/updated_at.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { corpusPosts } from './corpus';

export async function writeCorpus(out: Writable, count: number, seed = 7): Promise<void> {
  const source = corpusPosts(count, seed);
  const iso = (stamp: unknown) => `${String(stamp).replace(' ', 'T')}Z`;
  let chunk = '';
  for (let i = 0; i < count; i++) {
    const [title, content, author, created, updated] = source.row(i);
    chunk += `${JSON.stringify({ title, content, author, created_at: iso(created), updated_at: iso(updated) })}\n`;
    if (chunk.length > 1 << 20 || i === count - 1) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
}

if (require.main === module) {
  const { values } = parseArgs({ options: { count: { type: 'string', default: '1000000' }, seed: { type: 'string', default: '7' } } });
  void writeCorpus(process.stdout, Number(values.count), Number(values.seed));
}
