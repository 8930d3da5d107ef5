#!/usr/bin/env node
// The CLI entry: the compiled program lives in dist/ (built by `npm ci` through the prepare script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('storesync is not built: run `npm run build` (npm ci does it through prepare).');
  process.exit(1);
}
await import(entry.href);
