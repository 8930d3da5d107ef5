/**
 * Each kind of ERP failure has its own stable code, asserted against the real databases: a missing
 * table or column (ERR_ERP_SCHEMA, permanent), a statement that cannot work (ERR_ERP_QUERY, permanent),
 * a connection the server drops while a query runs (ERR_ERP_CONNECTION, retryable).
 */
import { afterAll, describe, expect, it } from 'vitest';

import { openSql, type SqlClient } from '../../src/erp/sql-client.js';
import { ErpError } from '../../src/errors.js';

const DATABASES = [
  {
    name: 'PostgreSQL',
    url: 'postgres://postgres@127.0.0.1:5432/test',
    whoAmI: 'SELECT pg_backend_pid() AS id',
    slow: 'SELECT pg_sleep(30)',
    kill: (id: number) => `SELECT pg_terminate_backend(${id})`,
  },
  {
    name: 'MariaDB',
    url: 'mysql://root@127.0.0.1:3306/test',
    whoAmI: 'SELECT CONNECTION_ID() AS id',
    slow: 'SELECT SLEEP(30)',
    kill: (id: number) => `KILL ${id}`,
  },
] as const;

const clients: SqlClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

function open(url: string, name: string): SqlClient {
  const client = openSql(url, { name });
  clients.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<ErpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ErpError);
  return error as ErpError;
}

describe.each(DATABASES)('$name errors', ({ url, whoAmI, slow, kill }) => {
  it('reports a missing table as ERR_ERP_SCHEMA, not retried', async () => {
    const error = await failure(open(url, 'codes').query('SELECT * FROM storesync_no_such_table'));
    expect(error).toMatchObject({ code: 'ERR_ERP_SCHEMA', retryable: false });
    expect(error.message).toContain('storesync_no_such_table');
  });

  it('reports a missing column as ERR_ERP_SCHEMA', async () => {
    const error = await failure(open(url, 'codes').query('SELECT storesync_no_such_column FROM (SELECT 1 AS one) AS t'));
    expect(error).toMatchObject({ code: 'ERR_ERP_SCHEMA', retryable: false });
  });

  it('reports a statement that cannot run as ERR_ERP_QUERY, not retried', async () => {
    const error = await failure(open(url, 'codes').query('SELEKT 1'));
    expect(error).toMatchObject({ code: 'ERR_ERP_QUERY', retryable: false });
  });

  it('reports a connection the server drops during a query as ERR_ERP_CONNECTION, retried', async () => {
    const sql = open(url, 'dropped');
    const admin = open(url, 'admin');
    const error = await failure(
      sql.transaction(async (tx) => {
        const [row] = await tx.query<{ id: number | string }>(whoAmI);
        // The server ends the connection while the query runs (a database restart, a DBA). Both are awaited
        // together: the query may fail before the kill answers, and its rejection must have a listener then.
        await Promise.all([tx.query(slow), admin.query(kill(Number(row?.id)))]);
      }),
    );
    expect(error).toMatchObject({ code: 'ERR_ERP_CONNECTION', retryable: true });
  });
});
