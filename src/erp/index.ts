/**
 * The ERP connectors: `createSource` builds the source a config entry describes. Sources yield records
 * whose fields use the store's names (see `fields.ts`), coerced to their types; the flows validate
 * ranges and queue them.
 */
import type { SourceConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { createCsvSource } from './csv-source.js';
import { unknownMappingTargets } from './fields.js';
import { createHttpSource } from './http-source.js';
import type { SourceDeps } from './source-deps.js';
import { createSqlSource } from './sql-source.js';
import type { ChangeSource } from './types.js';

export { compareCursors, cursorToVersion, isTimestampCursor, toCursor } from './cursor.js';
export { CURSOR_COLUMN, type FieldCatalog, type FieldSpec, FULFILLMENT_FIELDS, INVENTORY_FIELDS, KIT_FIELDS, normalizeRecord } from './fields.js';
export type { SourceDeps } from './source-deps.js';
export { openSql, type SqlClient, type SqlClientOptions } from './sql-client.js';
export type { ChangeBatch, ChangeSource, Cursor, RejectedRecord, SourceKind, SourceRecord } from './types.js';

/**
 * Creates the source a config entry describes. Throws ConfigError when its `mapping` names a field
 * the catalogue does not have (a typo would otherwise silently drop a column).
 */
export function createSource(config: SourceConfig, deps: SourceDeps): ChangeSource {
  const unknown = unknownMappingTargets(deps.fields, config.mapping);
  if (unknown.length > 0) {
    const known = Object.keys(deps.fields).join(', ');
    throw new ConfigError(
      unknown.map((target) => `source ${config.name}: mapping target "${target}" is not a field (expected cursor or one of ${known})`),
    );
  }
  switch (config.kind) {
    case 'sql':
      return createSqlSource(config, deps);
    case 'csv':
      return createCsvSource(config, deps);
    case 'http':
      return createHttpSource(config, deps);
  }
}
