import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { packageRoot } from '../../src/config/load.js';
import { promtool } from '../ops/helpers.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'storesync-alerts-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `promtool test rules` on deploy/alerts.yml with one test case. */
async function testRules(test: Record<string, unknown>): Promise<{ code: number; output: string }> {
  const file = join(dir, `case-${Math.random().toString(36).slice(2)}.yml`);
  await writeFile(file, stringify({ rule_files: [join(packageRoot(), 'deploy/alerts.yml')], evaluation_interval: '1m', tests: [test] }));
  const result = await promtool(['test', 'rules', file]);
  return { code: result.code, output: result.stdout + result.stderr };
}

describe('deploy/alerts.yml under promtool test rules', () => {
  it('fires StoresyncStoreCredentialsRefused on a refused login and clears once logins are accepted again', async () => {
    const result = await testRules({
      interval: '1m',
      input_series: [{ series: 'storesync_store_auth_failures_total{instance="a", job="storesync"}', values: '0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1' }],
      alert_rule_test: [
        { eval_time: '1m', alertname: 'StoresyncStoreCredentialsRefused', exp_alerts: [] },
        {
          eval_time: '3m',
          alertname: 'StoresyncStoreCredentialsRefused',
          exp_alerts: [
            {
              exp_labels: { severity: 'critical', instance: 'a', job: 'storesync' },
              exp_annotations: {
                summary: 'The store refused the credentials: store traffic is paused',
                description:
                  'storesync sends nothing to the store until a login succeeds; queued changes wait. Fix store.username / store.password (STORE_USERNAME, STORE_PASSWORD) and restart; /readyz says not ready meanwhile.',
              },
            },
          ],
        },
        { eval_time: '15m', alertname: 'StoresyncStoreCredentialsRefused', exp_alerts: [] },
      ],
    });
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });
});
