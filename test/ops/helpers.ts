/** Test helpers of the ops tests: config, log capture, promtool (a private redis-server: src/queue/redis-server.ts). */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';

import { loadConfig, mergeDeep } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger, type Logger } from '../../src/log.js';

/** A Redis key prefix of its own for one test file. */
export function testPrefix(): string {
  return `test-${randomUUID()}`;
}

/** A validated config for tests: HTTP on a random port, the given prefix, nothing read from process.env. */
export function testConfig(overrides: Record<string, unknown>): Readonly<Config> {
  return loadConfig({
    env: {},
    overrides: mergeDeep({ http: { host: '127.0.0.1', port: 0 }, log: { level: 'debug' }, shutdown: { timeoutMs: 5000 } }, overrides),
  });
}

/** A logger whose JSON lines are kept for assertions. */
export function logCollector(level: 'debug' | 'info' = 'debug'): { logger: Logger; lines(): Array<Record<string, unknown>>; text(): string } {
  let text = '';
  const logger = createLogger({ level, destination: { write: (line: string) => (text += line) } });
  return {
    logger,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Runs promtool; fails with a clear message when it is not installed. */
export async function promtool(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((path) => existsSync(path));
  if (!bin) throw new Error('promtool is missing: install the Debian package "prometheus" (.ci/run does)');
  return new Promise((resolve) => {
    const child = execFile(bin, args, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** The value of a Basic authorization header. */
export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
