import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { packageRoot } from '../../src/config/load.js';

const root = packageRoot();
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }> };

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.replace(/^v/, '').split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  return [major, minor, patch];
};
const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether `version` satisfies an npm `engines.node` range, in the forms the lock file holds: `*`,
 * `>=a.b.c`, `^a.b.c`, a bare `a` or `a.b`, joined by spaces (and) and `||` (or).
 */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .replace(/(>=|\^)\s+/g, '$1')
      .split(/\s+/)
      .every((comparator) => {
        if (comparator === '*' || comparator === '') return true;
        if (comparator.startsWith('>=')) return compare(v, parse(comparator.slice(2))) >= 0;
        if (comparator.startsWith('^')) {
          const base = parse(comparator.slice(1));
          return v[0] === base[0] && compare(v, base) >= 0;
        }
        const parts = comparator.split('.').filter((part) => /^\d+$/.test(part)).map(Number);
        return parts.every((part, i) => v[i] === part);
      }),
  );
}

/** The oldest Node storesync supports: the version in `engines.node` (`>=22.13.0`). */
const floor = pkg.engines.node.replace(/^>=\s*/, '');

describe('supported Node versions', () => {
  it('states one floor, on a maintained line: package.json engines, @types/node and the README agree', () => {
    expect(pkg.engines.node).toMatch(/^>=\d+\.\d+\.\d+$/);
    expect(parse(floor)[0]).toBeGreaterThanOrEqual(22);
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${parse(floor)[0]}\\.`));
    const [major, minor] = parse(floor);
    expect(read('README.md')).toContain(`Node ≥ ${major}.${minor}`);
  });

  it('builds the Docker image on a Node line at or above the floor', () => {
    const images = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((match) => match[1] as string);
    expect(images.length).toBeGreaterThan(0);
    for (const major of images) expect(Number(major)).toBeGreaterThanOrEqual(parse(floor)[0]);
  });

  it('installs no package that wants a newer Node than the floor (npm ci warns of none on a supported Node)', () => {
    const wanting = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !entry.optional && !Array.isArray(entry.engines) && entry.engines?.node !== undefined)
      .filter(([, entry]) => !satisfies(floor, (entry.engines as { node: string }).node) || !satisfies('24.0.0', (entry.engines as { node: string }).node))
      .map(([path, entry]) => `${path} (node ${(entry.engines as { node: string }).node})`);
    expect(wanting).toEqual([]);
  });

  it('reads npm engine ranges the way npm does', () => {
    expect(satisfies('22.13.0', '^20.19.0 || ^22.13.0 || >=24')).toBe(true);
    expect(satisfies('22.12.0', '^20.19.0 || ^22.13.0 || >=24')).toBe(false);
    expect(satisfies('20.20.2', '>=22')).toBe(false);
    expect(satisfies('24.0.0', '18 || 20 || >=22')).toBe(true);
    expect(satisfies('15.0.0', '>=16 || 14 >=14.17')).toBe(false);
    expect(satisfies('22.13.0', '>= 10.x')).toBe(true);
  });

  it(`runs bullmq's msgpack decoding with its native extension on this Node (${process.version}), with no rebuild`, () => {
    const fromBullmq = createRequire(createRequire(import.meta.url).resolve('bullmq'));
    expect((fromBullmq('msgpackr') as { isNativeAccelerationEnabled: boolean }).isNativeAccelerationEnabled).toBe(true);
  });
});
