#!/usr/bin/env node
// Run by `npm install` (prepare): points git at .githooks (the commit-msg check) when this is a
// git work tree; elsewhere (a tarball, an installed package) it does nothing.
import { execFileSync } from 'node:child_process';

try {
  const inside = execFileSync('git', ['rev-parse', '--is-inside-work-tree'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  if (inside.trim() === 'true') execFileSync('git', ['config', 'core.hooksPath', '.githooks'], { stdio: 'ignore' });
} catch {
  // no git, or not a work tree: nothing to install
}
