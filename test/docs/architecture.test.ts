import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { packageRoot } from '../../src/config/load.js';

const root = packageRoot();
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

describe('docs/architecture.md', () => {
  it('names only files and folders that exist', () => {
    const paths = [...doc.matchAll(/\b((?:src|test|deploy|docs|bench|config|examples)\/[A-Za-z0-9_.\-/]*[A-Za-z0-9_/])/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });

  it('describes every folder and top-level file of src/', () => {
    const entries = readdirSync(join(root, 'src'), { withFileTypes: true }).map((e) => (e.isDirectory() ? `src/${e.name}/` : `src/${e.name}`));
    expect(entries.filter((entry) => !doc.includes(entry))).toEqual([]);
  });

  it('names functions and classes that the file it points to defines', () => {
    // "`pollSource` in `src/sync/inventory/producer.ts`" and "`InventoryApi.update` (`src/store/inventory.ts`)".
    const claims = [...doc.matchAll(/`([A-Za-z][\w.]*)`(?:\s+in\s+|,?\s+\()`(src\/[^`]+\.ts)`/g)].map((m) => ({ name: m[1]!, file: m[2]! }));
    expect(claims.length).toBeGreaterThan(20);
    const missing = claims.filter(({ name, file }) => {
      const text = readFileSync(join(root, file), 'utf8');
      return !name.split('.').every((part) => new RegExp(`\\b${part}\\b`).test(text));
    });
    expect(missing).toEqual([]);
  });
});
