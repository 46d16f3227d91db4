// Builds the API reference page (build/docs/index.html) with Redocly, self-contained: scripts are
// inlined (--inlineBundle), Google fonts are off, and the one thing Redoc still loads from its
// CDN, the "API docs by Redocly" logo, is swapped for an inline image, so the page loads
// nothing from anywhere but the service (tests/integration/handlers/service.test.ts checks in Chromium).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const out = 'build/docs/index.html';
execFileSync(
  'npx',
  ['redocly', 'build-docs', 'openapi/openapi.yaml', '--inlineBundle', '--templateOptions.disableGoogleFont=true', '--output', out],
  {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
  },
);

const logo = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="14"><text x="0" y="11" font-family="sans-serif" font-size="11" fill="#666">Redocly</text></svg>',
)}`;
const html = readFileSync(out, 'utf8').replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g, logo);
if (html.includes('cdn.redoc.ly')) throw new Error(`${out} still refers to cdn.redoc.ly`);
writeFileSync(out, html);
console.log(`built ${out}`);
