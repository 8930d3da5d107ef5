/**
 * The import graph of source folders and its cycles, for the house rule "no import cycle in src/ or bench/".
 * Unlike ESLint's import-x/no-cycle, which skips type-only imports, every import counts here: static,
 * type-only (`import type`, `export type … from`, `import('…').T`), re-exports and dynamic `import()`.
 * A type-only circle costs nothing at run time but still ties the two modules together: neither can be
 * read, moved or tested without the other.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';

import ts from 'typescript';

/** Module → the modules of the same folders it imports, as paths relative to the package root (`src/a/b.ts`). */
export type ImportGraph = Map<string, Set<string>>;

/** Reads every .ts file under the folders `dirs` of `root` and the relative imports between them. */
export async function importGraph(root: string, dirs: readonly string[]): Promise<ImportGraph> {
  const files: string[] = [];
  for (const dir of dirs) {
    const entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
    files.push(...entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => relative(root, join(e.parentPath, e.name))));
  }
  const known = new Set(files);
  const graph: ImportGraph = new Map();
  for (const file of files.sort()) {
    const { importedFiles } = ts.preProcessFile(await readFile(join(root, file), 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      // NodeNext sources import './x.js' for './x.ts'.
      const target = relative(root, resolve(root, dirname(file), fileName)).replace(/\.js$/, '.ts');
      if (known.has(target)) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/**
 * The import cycles of a graph: one entry per strongly connected component of two modules or more (or a
 * module importing itself), as the shortest cycle through each of its modules, each starting at the
 * module that comes first by name: `['a.ts', 'b.ts', 'a.ts']`. Sorted and without repeats.
 */
export function importCycles(graph: ImportGraph): string[][] {
  const cycles = new Map<string, string[]>();
  for (const component of components(graph)) {
    for (const start of component) {
      const cycle = shortestCycle(graph, start, component);
      if (!cycle) continue;
      const ring = cycle.slice(0, -1);
      const first = ring.indexOf([...ring].sort()[0]!);
      const rotated = [...ring.slice(first), ...ring.slice(0, first)];
      cycles.set(rotated.join(' '), [...rotated, rotated[0]!]);
    }
  }
  return [...cycles.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, cycle]) => cycle);
}

/** Tarjan's strongly connected components (recursive: a source tree is far from the stack's depth). */
function components(graph: ImportGraph): Set<string>[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: Set<string>[] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component = new Set<string>();
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.add(member);
    } while (member !== node);
    if (component.size > 1 || graph.get(node)?.has(node)) out.push(component);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return out;
}

/** The shortest path from `start` back to itself inside `within` (breadth first), or undefined. */
function shortestCycle(graph: ImportGraph, start: string, within: Set<string>): string[] | undefined {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!within.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)!) path.unshift(at);
        return [start, ...path];
      }
      if (previous.has(next)) continue;
      previous.set(next, node);
      queue.push(next);
    }
  }
  return undefined;
}
