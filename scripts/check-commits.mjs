#!/usr/bin/env node
// Fails when a commit made after the cut-off has a subject over 72 characters (the first line of
// its message), so that `git log --oneline` stays readable. Commits up to the cut-off are history
// and are left as they are. Where there is no git history (a tarball, a shallow clone without the
// cut-off), it says so and passes.
import { execFileSync } from 'node:child_process';

const CUTOFF = 'ac961bde57f91921186f0de79b687f97b1382e44';
const LIMIT = 72;

const git = (...args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

function skip(why) {
  console.log(`check-commits: skipped, ${why}`);
  process.exit(0);
}

try {
  if (git('rev-parse', '--is-inside-work-tree').trim() !== 'true') skip('not inside a git work tree');
} catch {
  skip('no git history here (not a git work tree, or git is not installed)');
}
try {
  git('cat-file', '-e', `${CUTOFF}^{commit}`);
} catch {
  skip(`the cut-off commit ${CUTOFF.slice(0, 12)} is not in this clone's history (shallow clone?)`);
}

const log = git('log', '--format=%h%x09%s', `${CUTOFF}..HEAD`).split('\n').filter(Boolean);
const long = log.filter((line) => [...line.slice(line.indexOf('\t') + 1)].length > LIMIT);
for (const line of long) {
  const [hash, subject] = line.split('\t');
  console.error(`${hash}: subject is ${[...subject].length} characters (at most ${LIMIT}): ${subject}`);
}
if (long.length) {
  console.error('check-commits: shorten these subjects (git rebase -i, reword); put the why in the body');
  process.exit(1);
}
console.log(`check-commits: ${log.length} commit(s) since the cut-off, every subject at most ${LIMIT} characters`);
