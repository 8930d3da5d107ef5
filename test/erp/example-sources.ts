/**
 * The inventory sources of config/examples/ as the end-to-end scenarios and the examples test use them:
 * the example's own queries, pointed at a scratch database. PostgreSQL examples name their tables
 * unqualified, as on a real Odoo or legacy database; the scratch schema goes first on the search_path.
 */
import { join } from 'node:path';

import { loadConfig, packageRoot } from '../../src/config/load.js';
import type { SourceConfig, SqlSourceConfig } from '../../src/config/schema.js';
import { PG_URL } from './databases.js';

/** The first inventory source of `config/examples/<file>`. */
export function exampleSource(file: string): SourceConfig {
  const config = loadConfig({ configFile: join(packageRoot(), 'config', 'examples', file), env: {} });
  const source = config.inventory.sources[0];
  if (source === undefined) throw new Error(`config/examples/${file} has no inventory source`);
  return source;
}

/** The first inventory source of `config/examples/<file>`, which must be a SQL source. */
export function exampleSqlSource(file: string): SqlSourceConfig {
  const source = exampleSource(file);
  if (source.kind !== 'sql') throw new Error(`config/examples/${file}: expected a sql source, found ${source.kind}`);
  return source;
}

/** The test PostgreSQL database with `schema` first on the search_path (unqualified table names resolve there). */
export function pgUrlIn(schema: string): string {
  return `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}
