/**
 * Result files and the README table. A full run writes `bench/results/<name>.json` and rewrites the
 * table between the markers of `bench/README.md`; a `--quick` run writes `<name>.quick.json` and leaves
 * the README alone, so a smoke run never replaces measured figures.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

/** Where the run happened, stored with every result (figures only compare within one run). */
export interface RunInfo {
  date: string;
  command: string;
  quick: boolean;
  node: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
}

/** A benchmark's stored result: its figures and one summary line per row of the README table. */
export interface BenchResult {
  name: string;
  run: RunInfo;
  /** Rows of the README table: what, figure, baseline, ratio or verdict. */
  summary: Array<{ measure: string; value: string; baseline: string; verdict: string }>;
  data: unknown;
}

/** Describes this machine and the command line. */
export function runInfo(command: string, quick: boolean): RunInfo {
  const cpu = cpus();
  return {
    date: new Date().toISOString(),
    command,
    quick,
    node: process.version,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}

/** Writes a result file; returns its path. */
export function writeResult(resultsDir: string, result: BenchResult): string {
  const file = join(resultsDir, `${result.name}${result.run.quick ? '.quick' : ''}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

const START = '<!-- bench-results:start -->';
const END = '<!-- bench-results:end -->';

/** Rewrites the README's results table from the full (non-quick) result files present. */
export function updateReadme(readme: string, resultsDir: string, names: readonly string[]): void {
  if (!existsSync(readme)) return;
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return;
  const sections: string[] = [];
  for (const name of names) {
    const file = join(resultsDir, `${name}.json`);
    if (!existsSync(file)) continue;
    const result = JSON.parse(readFileSync(file, 'utf8')) as BenchResult;
    sections.push(
      `### ${name}\n\n` +
        `\`${result.run.command}\` — ${result.run.date.slice(0, 16).replace('T', ' ')} UTC, ${result.run.cpus} × ${result.run.cpuModel}, Node ${result.run.node}\n\n` +
        '| measure | value | baseline (same run) | ratio / verdict |\n|---|---|---|---|\n' +
        result.summary.map((row) => `| ${row.measure} | ${row.value} | ${row.baseline} | ${row.verdict} |`).join('\n'),
    );
  }
  const body = sections.length > 0 ? sections.join('\n\n') : '_No full run recorded yet: `npm run bench`._';
  writeFileSync(readme, `${text.slice(0, start + START.length)}\n${body}\n${text.slice(end)}`);
}
