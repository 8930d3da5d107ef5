import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, describe, expect, it } from 'vitest';

import { openSql, type SqlClient } from '../../src/erp/sql-client.js';
import { ErpError } from '../../src/errors.js';

const DATABASES = [
  { name: 'PostgreSQL', url: 'postgres://postgres@127.0.0.1:5432/test', whoAmI: 'SELECT pg_backend_pid() AS id', kill: (id: number) => `SELECT pg_terminate_backend(${id})` },
  { name: 'MariaDB', url: 'mysql://root@127.0.0.1:3306/test', whoAmI: 'SELECT CONNECTION_ID() AS id', kill: (id: number) => `KILL ${id}` },
] as const;

const clients: SqlClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

describe.each(DATABASES)('a $name connection lost inside a transaction', ({ url, whoAmI, kill }) => {
  it('fails the transaction with an ErpError instead of crashing the process, and the client works afterwards', async () => {
    const sql = openSql(url, { name: 'loss' });
    const admin = openSql(url, { name: 'admin' });
    clients.push(sql, admin);
    const outcome = sql.transaction(async (tx) => {
      const [row] = await tx.query<{ id: number | string }>(whoAmI);
      // The server ends this connection while the transaction holds it (a database restart, a DBA).
      await admin.query(kill(Number(row?.id)));
      // Give the driver time to notice: its 'error' event fires on the checked-out connection.
      await sleep(200);
      await tx.query('SELECT 1 AS one');
    });
    await expect(outcome).rejects.toBeInstanceOf(ErpError);
    // A fresh connection from the pool serves the next query.
    expect(await sql.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
