/** Scratch ERP databases for the connector tests: a PG schema or a MariaDB database per test file. */
import { randomUUID } from 'node:crypto';

import { openSql, type SqlClient } from '../../src/erp/sql-client.js';

export const PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const MARIADB_ROOT_URL = 'mysql://root@127.0.0.1:3306/test';

/** A fresh name such as `erp_3f2a9c1b7d`. */
export function scratchName(): string {
  return `erp_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/** A PostgreSQL schema of its own, dropped by `drop()`. */
export async function pgScratch(): Promise<{ schema: string; db: SqlClient; drop(): Promise<void> }> {
  const schema = scratchName();
  const db = openSql(PG_URL);
  await db.query(`CREATE SCHEMA ${schema}`);
  return {
    schema,
    db,
    async drop() {
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await db.close();
    },
  };
}

/** A MariaDB database of its own (`url` points at it), dropped by `drop()`. */
export async function mariaScratch(): Promise<{ database: string; url: string; db: SqlClient; drop(): Promise<void> }> {
  const database = scratchName();
  const root = openSql(MARIADB_ROOT_URL);
  await root.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4`);
  const url = `mysql://root@127.0.0.1:3306/${database}`;
  const db = openSql(url);
  return {
    database,
    url,
    db,
    async drop() {
      await db.close();
      await root.query(`DROP DATABASE IF EXISTS ${database}`);
      await root.close();
    },
  };
}
