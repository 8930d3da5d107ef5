import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { importGraph } from './import-graph.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The folders under src/sync/inventory/ that have an entry point (`src/sync/inventory/listing/`, …). */
function entryFolders(files: Iterable<string>): string[] {
  const folders = [...files].filter((f) => f.startsWith('src/sync/inventory/') && f.endsWith('/index.ts')).map((f) => `${dirname(f)}/`);
  return folders.filter((f) => f !== 'src/sync/inventory/');
}

describe('the house: the concept folders of src/sync/inventory/ are entered through their index.ts', () => {
  it('has the folders the design names, each with its entry point', () => {
    for (const folder of ['reconcile', 'snapshot', 'listing']) expect(existsSync(join(root, 'src/sync/inventory', folder, 'index.ts')), folder).toBe(true);
  });

  it('finds no import from outside a folder to a module inside it other than its index.ts', async () => {
    const graph = await importGraph(root, ['src', 'bench']);
    const folders = entryFolders(graph.keys());
    const breaches: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        for (const folder of folders) {
          if (file.startsWith(folder) || !target.startsWith(folder) || target === `${folder}index.ts`) continue;
          breaches.push(`${file} → ${target} (import ${folder}index.js instead)`);
        }
      }
    }
    expect(breaches).toEqual([]);
  });
});
