import { describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { storeCredentialProblems } from '../../src/config/store-credentials.js';

/** A configuration whose inventory flow calls the store, with these credentials. */
const withCredentials = (username: string, password: string) =>
  loadConfig({ env: {}, overrides: { store: { username, password }, inventory: { sources: [{ name: 'erp', kind: 'csv', dir: '/tmp', schedule: '*/30 * * * * *' }] } } });

describe('storeCredentialProblems', () => {
  it('names store.username when it is empty or only spaces, and store.password when empty, with the flows that need them', () => {
    expect(storeCredentialProblems(withCredentials('demo', 'pw'))).toEqual([]);
    const blank = storeCredentialProblems(withCredentials('   ', 'pw'));
    expect(blank, 'a user name of spaces is no user name').toEqual(['store.username: required, the enabled flows call the store: inventory (1 source) (env STORE_USERNAME)']);
    expect(storeCredentialProblems(withCredentials('demo', ''))).toEqual(['store.password: required, the enabled flows call the store: inventory (1 source) (env STORE_PASSWORD)']);
  });
});
