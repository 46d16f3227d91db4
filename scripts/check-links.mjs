#!/usr/bin/env node
// Checks the relative links and #anchors of Markdown files, offline: a link to another site is
// never fetched. Usage: node scripts/check-links.mjs [file or folder ...] (default: the docs).
// Exit 1 and one line per broken link (file:line: target: why) when any is broken.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';

const DEFAULT = ['README.md', 'BENCHMARKS.md', 'docs'];

/** The Markdown files named, folders searched recursively. */
function markdownFiles(paths) {
  const out = [];
  for (const p of paths) {
    if (!existsSync(p)) continue;
    if (statSync(p).isDirectory()) {
      for (const entry of readdirSync(p)) {
        if (entry === 'node_modules' || entry.startsWith('.')) continue;
        out.push(...markdownFiles([join(p, entry)]));
      }
    } else if (extname(p) === '.md') out.push(p);
  }
  return out;
}

/** Lines outside fenced code blocks, with inline code blanked, keeping line numbers. */
function proseLines(text) {
  let fence = null;
  return text.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
      return '';
    }
    if (open) {
      fence = open[1];
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, '');
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(text) {
  const seen = new Map();
  const anchors = new Set();
  for (const line of proseLines(text.replace(/\r\n?/g, '\n'))) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = m[1]
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n ? `${slug}-${n}` : slug);
  }
  // Explicit anchors: <a id="..."> or <a name="...">.
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  return anchors;
}

const cache = new Map();
function anchorsIn(file) {
  if (!cache.has(file)) cache.set(file, anchorsOf(readFileSync(file, 'utf8')));
  return cache.get(file);
}

/** Every broken relative link or anchor in `file`, as messages. */
export function brokenLinks(file) {
  const problems = [];
  const text = readFileSync(file, 'utf8').replace(/\r\n?/g, '\n');
  const lines = proseLines(text);
  const definitions = /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/;
  lines.forEach((line, i) => {
    const targets = [];
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
    const def = definitions.exec(line);
    if (def) targets.push(def[1]);
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: ... never fetched
      const [pathPart, anchor] = target.split('#', 2);
      const path = decodeURIComponent(pathPart);
      const where = path ? resolve(dirname(file), path) : resolve(file);
      const say = (why) => problems.push(`${relative(process.cwd(), file)}:${i + 1}: ${target}: ${why}`);
      if (path.startsWith('/')) {
        say('absolute path; link relative to this file');
        continue;
      }
      if (!existsSync(where)) {
        say('no such file');
        continue;
      }
      if (anchor !== undefined && anchor !== '') {
        if (extname(where) !== '.md') continue;
        if (!anchorsIn(where).has(decodeURIComponent(anchor).toLowerCase()))
          say(`no heading with anchor #${anchor} in ${relative(process.cwd(), where)}`);
      }
    }
  });
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const files = markdownFiles(args.length ? args : DEFAULT);
  const problems = files.flatMap(brokenLinks);
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`check-links: ${problems.length} broken link(s) in ${files.length} file(s)`);
    process.exit(1);
  }
  console.log(`check-links: ${files.length} file(s), every relative link and anchor resolves`);
}
