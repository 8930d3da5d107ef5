/**
 * `node dist/bench/profile-summary.js [--from S] [--to S] [--top N] FILE.cpuprofile...`: sums the V8 CPU
 * profiles that `npm run bench -- --profile DIR` writes (one per daemon process) into tables a README can
 * quote: busy time by package (ours by src/ folder, each dependency, GC), self and total time of the top
 * functions, and the outermost call paths of our code. `--from`/`--to` keep the samples between those
 * seconds after the profile's start (the per-second busy line printed first shows where a cell ran).
 * Frames of node itself (sockets, streams, microtasks) are also charged to their nearest caller outside
 * node, so `writev` counts for undici or ioredis rather than as "node".
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const PACKAGES = ['bullmq', 'ioredis', 'redis-parser', 'undici', 'pino', 'zod', 'prom-client', 'fastify', 'pg', 'pg-protocol', 'msgpackr', 'node-cron'];
const NODE = 'node (core, native)';

/** Who a frame belongs to: `ours <src/folder>`, a dependency, GC, or node itself. */
function owner(frame: CallFrame): string {
  if (frame.functionName === '(garbage collector)') return 'GC';
  if (frame.functionName === '(program)') return '(program: V8, not JS)';
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(frame.url)?.[1];
  if (dependency !== undefined) return PACKAGES.includes(dependency) ? dependency : `other dependency (${dependency})`;
  const ours = /\/dist\/(src\/[^/]+(?:\/[^/.]+)?)/.exec(frame.url)?.[1];
  if (ours !== undefined) return `ours ${ours.replace(/\.js$/, '')}`;
  if (frame.url.startsWith('wasm://')) return 'wasm (undici llhttp)';
  return NODE;
}

/** A frame as a table names it: function, file below node_modules or dist, line. */
function label(frame: CallFrame): string {
  const file = frame.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string' } },
});
const from = Number(values.from ?? 0);
const to = Number(values.to ?? Number.POSITIVE_INFINITY);
const top = Number(values.top ?? 15);

const tables = {
  self: new Map<string, number>(),
  charged: new Map<string, number>(),
  onStack: new Map<string, number>(),
  selfFunctions: new Map<string, number>(),
  totalFunctions: new Map<string, number>(),
  paths: new Map<string, number>(),
};
const perSecond = new Map<number, number>();
let busyMs = 0;
function add<K>(map: Map<K, number>, key: K, ms: number): void {
  map.set(key, (map.get(key) ?? 0) + ms);
}

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  let seconds = 0;
  profile.samples.forEach((id, i) => {
    seconds += (profile.timeDeltas[i] ?? 0) / 1e6;
    // A sample stands for the time until the next one.
    const ms = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
    const leaf = byId.get(id);
    if (leaf === undefined || leaf.callFrame.functionName === '(idle)') return;
    add(perSecond, Math.floor(seconds), ms);
    if (seconds < from || seconds >= to) return;
    busyMs += ms;
    const stack: ProfileNode[] = [];
    for (let node: ProfileNode | undefined = leaf; node && node.callFrame.functionName !== '(root)'; node = parent.get(node.id)) stack.push(node);
    add(tables.self, owner(leaf.callFrame), ms);
    add(tables.charged, owner(stack.find((node) => owner(node.callFrame) !== NODE)?.callFrame ?? leaf.callFrame), ms);
    add(tables.selfFunctions, label(leaf.callFrame), ms);
    // A function or package counts once per sample however often it recurs on the stack.
    for (const key of new Set(stack.map((node) => owner(node.callFrame)))) add(tables.onStack, key, ms);
    for (const key of new Set(stack.map((node) => label(node.callFrame)))) add(tables.totalFunctions, key, ms);
    const ours = stack.filter((node) => owner(node.callFrame).startsWith('ours ')).reverse();
    add(tables.paths, ours.length > 0 ? ours.slice(0, 3).map((node) => label(node.callFrame)).join(' > ') : '(no frame of ours)', ms);
  });
}

const print = (title: string, map: Map<string, number>, rows: number): void => {
  process.stdout.write(`\n| ${title} | ms | share of busy |\n|---|---|---|\n`);
  for (const [key, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    process.stdout.write(`| ${key} | ${Math.round(ms)} | ${((100 * ms) / busyMs).toFixed(1)} % |\n`);
  }
};
process.stdout.write(`busy ms per second after the start: ${[...perSecond].map(([s, ms]) => `${s}:${Math.round(ms)}`).join(' ')}\n`);
process.stdout.write(`busy ${Math.round(busyMs)} ms between ${from} and ${to} s, ${positionals.length} profile(s)\n`);
print('self time by package', tables.self, top);
print("self time, node's own frames charged to their nearest caller", tables.charged, top);
print('on the stack (total) by package', tables.onStack, top);
print('self time by function', tables.selfFunctions, top);
print('total time by function', tables.totalFunctions, top);
print('outermost 3 frames of ours', tables.paths, top);
