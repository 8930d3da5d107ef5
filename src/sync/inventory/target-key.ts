/**
 * The key of what the snapshot diff tracks: today the SKU's Code, plus its SiteId when the record
 * names one. A later change makes the unit of sync a target (Code, SiteId, price list); fingerprints
 * and vanished state are keyed by this function so that the change is made here.
 */
import type { SourceRecord } from '../../erp/types.js';

/** Between the parts of a key: a control character no Code or SiteId contains. */
const SEPARATOR = '\u001f';

/** The record's target key, or undefined when it has no Code. */
export function targetKey(record: Pick<SourceRecord, 'fields'>): string | undefined {
  const code = record.fields.Code;
  if (typeof code !== 'string') return undefined;
  const siteId = record.fields.SiteId;
  return typeof siteId === 'number' ? `${code}${SEPARATOR}${siteId}` : code;
}

/** The Code and (when the key names one) the SiteId of a target key. */
export function targetParts(key: string): { code: string; siteId?: number } {
  const at = key.lastIndexOf(SEPARATOR);
  if (at < 0) return { code: key };
  return { code: key.slice(0, at), siteId: Number(key.slice(at + 1)) };
}

/** A target key as people read it: `SKU-1`, `SKU-1 (site 2)`. */
export function targetLabel(key: string): string {
  const { code, siteId } = targetParts(key);
  return siteId === undefined ? code : `${code} (site ${siteId})`;
}
