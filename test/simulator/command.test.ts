import { describe, expect, it } from 'vitest';

import { runCli } from '../../src/cli/program.js';
import { call } from './http.js';

/** Runs `storesync simulator ...` in-process; resolves `url` when the start line is printed. */
function runSimulator(args: string[]) {
  const stop = new AbortController();
  let stdout = '';
  let stderr = '';
  let announce: (url: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (announce = resolve));
  const exit = runCli(['simulator', ...args], {
    env: {},
    stdout: {
      write: (text: string) => {
        stdout += text;
        const match = /listening on (http:\/\/\S+)/.exec(stdout);
        if (match?.[1]) announce(match[1]);
      },
    },
    stderr: { write: (text: string) => (stderr += text) },
    stopSignal: stop.signal,
  });
  return { url, exit, stop: () => stop.abort(), output: () => ({ stdout, stderr }) };
}

describe('storesync simulator command', () => {
  it('prints one start line, serves the API with the given options, and exits 0 on the stop signal', async () => {
    const run = runSimulator(['--port', '0', '--items', '7', '--sales', '3', '--user', 'u1', '--pass', 'p&1', '--hash-ttl-s', '60']);
    const url = await Promise.race([run.url, run.exit.then((code) => Promise.reject(new Error(`exited ${code}: ${run.output().stderr}`)))]);
    const auth = await call<{ data: string }>(url, 'GET', '/Api/Auth/', { query: { username: 'u1', password: 'p&1' } });
    expect(auth.status).toBe(200);
    const items = await call<unknown[]>(url, 'GET', '/Api/Inventory/Get', { query: { hash: auth.body.data } });
    expect(items.body).toHaveLength(7);
    expect((await call<{ hashTtlS: number }>(url, 'GET', '/__control/faults')).body.hashTtlS).toBe(60);
    run.stop();
    expect(await run.exit).toBe(0);
    // The user, not a password given with --pass (secrets are not echoed).
    expect(run.output().stdout).toMatch(/^storesync simulator listening on http:\/\/127\.0\.0\.1:\d+ {3}\(credentials u1 \/ the password given with --pass\)\n$/);
    expect(run.output().stdout).not.toContain('p&1');
    await expect(call(url, 'GET', '/__control')).rejects.toThrow();
  });

  it('prints the demo credentials on its start line as the README shows them (issue 28, 7)', async () => {
    const run = runSimulator(['--port', '0', '--items', '1', '--sales', '0']);
    const url = await Promise.race([run.url, run.exit.then((code) => Promise.reject(new Error(`exited ${code}: ${run.output().stderr}`)))]);
    expect(run.output().stdout).toBe(`storesync simulator listening on ${url}   (credentials demo / demo-password)\n`);
    // They are the ones it accepts.
    expect((await call(url, 'GET', '/Api/Auth/', { query: { username: 'demo', password: 'demo-password' } })).status).toBe(200);
    run.stop();
    expect(await run.exit).toBe(0);
  });

  it.each([
    ['--fail-rate', '1.5', 'probability from 0 to 1'],
    ['--items', '-1', 'integer >= 0'],
    ['--port', 'eighty', 'integer >= 0'],
    ['--port', '70000', 'a port number from 0 to 65535'],
    ['--hash-ttl-s', '0', 'number > 0'],
    ['--items-per-site', '1,1', 'comma-separated positive integers, none repeated'],
    ['--items-per-site', '0,2', 'comma-separated positive integers, none repeated'],
    ['--price-lists', '1:A,2:A', 'comma-separated id:CODE pairs, ids positive, no id or code repeated'],
    ['--price-lists', '1:A,B', 'comma-separated id:CODE pairs, ids positive, no id or code repeated'],
  ])('exits 3, naming the option, the value and the rule, for %s %s', async (flag, value, rule) => {
    const run = runSimulator([flag, value]);
    expect(await run.exit).toBe(3);
    expect(run.output().stderr).toBe(`storesync: nothing sent: simulator options: field ${flag} = "${value}" breaks "${rule}"\n`);
  });

  it('holds items per site and price lists when asked (bare flags: sites 1,2,3 and the three seeded lists)', async () => {
    const run = runSimulator(['--port', '0', '--items', '3', '--sales', '0', '--items-per-site', '--price-lists', '4:RETAIL, 6:WHOLESALE']);
    const url = await Promise.race([run.url, run.exit.then((code) => Promise.reject(new Error(`exited ${code}: ${run.output().stderr}`)))]);
    expect((await call(url, 'GET', '/__control/price-lists')).body).toEqual([{ id: 4, code: 'RETAIL' }, { id: 6, code: 'WHOLESALE' }]);
    const onThree = await call<Array<{ SiteId: number }>>(url, 'GET', '/__control/items', { query: { siteId: 3 } });
    expect(onThree.body.map((i) => i.SiteId)).toEqual([3, 3, 3]);
    run.stop();
    expect(await run.exit).toBe(0);
  });
});
