/**
 * The unit of sync: a target `(Code, SiteId, price list)`. Stock and the item's other fields belong to
 * `(Code, SiteId)`; `Price` and `OfferPrice` to `(Code, SiteId, price list)`. A record names its target
 * with `SiteId` and `PriceListCode` or `PriceListId` columns (`inventory.priceLists` maps one to the
 * other); without them it is the default target.
 *
 * Everything per target (pending state, versions, acknowledged values, locks, jobs, fingerprints,
 * vanished state) is keyed by `keyOf`. The default target's key is the bare Code, exactly the per-SKU
 * key of storesync before targets, so state written by an earlier release is the default target's
 * without any migration. Other targets append `\u001f` + SiteId and `\u001e` + the list's id: control
 * characters a Code never holds (the key functions refuse one that does).
 *
 * One site continues the bare-Code state: `store.siteId` when `inventory.sites` lists it (`homeSiteOf`).
 * Before the sites were listed, storesync wrote that site's copy under the bare Code (the PUT named no
 * site: the copy the store takes by default); listed, it is the same store copy, so its targets keep
 * their state under the bare-Code keys (`stateKeyOf`) instead of starting empty and sending every SKU
 * again, and a job queued before the sites were listed is that site's (`homeTargetOf`).
 */
import type { SourceRecord } from '../../erp/types.js';
import type { ValidationIssue } from '../../errors.js';

/** Before the SiteId. */
const SITE = '\u001f';
/** Before the price list's id. */
const LIST = '\u001e';

/** A store price list (`inventory.priceLists`). */
export interface PriceList {
  id: number;
  code: string;
}

/** The parts of a target; none but `code` for the default target. */
export interface Target {
  code: string;
  siteId?: number;
  priceListId?: number;
}

/** The fields that name a target, not values of it. */
export const TARGET_FIELDS: ReadonlySet<string> = new Set(['SiteId', 'PriceListCode', 'PriceListId']);

/** The fields that belong to a price list's target. */
export const PRICE_FIELDS: ReadonlySet<string> = new Set(['Price', 'OfferPrice']);

/** The key of a target: the bare Code for the default target. */
export function keyOf(target: Target): string {
  let key = target.code;
  if (target.siteId !== undefined) key += `${SITE}${target.siteId}`;
  if (target.priceListId !== undefined) key += `${LIST}${target.priceListId}`;
  return key;
}

/** The parts of a target key. */
export function targetParts(key: string): Target {
  // Fast path, the default target: a bare Code.
  const site = key.indexOf(SITE);
  const list = key.indexOf(LIST);
  if (site < 0 && list < 0) return { code: key };
  const codeEnd = site < 0 ? list : list < 0 ? site : Math.min(site, list);
  const out: Target = { code: key.slice(0, codeEnd) };
  if (site >= 0) out.siteId = Number(key.slice(site + 1, list > site ? list : undefined));
  if (list >= 0) out.priceListId = Number(key.slice(list + 1));
  return out;
}

/** The Code of a target key (the key itself for the default target). */
export function codeOf(key: string): string {
  return targetParts(key).code;
}

/** A target key as people read it: `SKU-1`, `SKU-1 (site 2)`, `SKU-1 (site 2, price list WHOLESALE)`. */
export function targetLabel(key: string, lists: readonly PriceList[] = []): string {
  const { code, siteId, priceListId } = targetParts(key);
  const parts: string[] = [];
  if (siteId !== undefined) parts.push(`site ${siteId}`);
  if (priceListId !== undefined) parts.push(`price list ${lists.find((list) => list.id === priceListId)?.code ?? priceListId}`);
  return parts.length === 0 ? code : `${code} (${parts.join(', ')})`;
}

/**
 * The price list a record names (by `PriceListCode`, `PriceListId` or both, which must agree), undefined
 * when it names none, or the issue that refuses it: a list not in `inventory.priceLists`.
 */
export function priceListOf(fields: Record<string, unknown>, lists: readonly PriceList[], record?: string): PriceList | undefined | ValidationIssue {
  const byCode = fields.PriceListCode;
  const byId = fields.PriceListId;
  const hasCode = byCode !== undefined && byCode !== null && byCode !== '';
  const hasId = byId !== undefined && byId !== null;
  if (!hasCode && !hasId) return undefined;
  const known = lists.length === 0 ? 'none configured' : lists.map((list) => `${list.id}:${list.code}`).join(', ');
  const rule = `a price list of inventory.priceLists (${known})`;
  const found = hasCode ? lists.find((list) => list.code === byCode) : lists.find((list) => list.id === byId);
  if (!found) return { record, field: hasCode ? 'PriceListCode' : 'PriceListId', value: hasCode ? byCode : byId, rule };
  if (hasCode && hasId && found.id !== byId) {
    return { record, field: 'PriceListId', value: byId, rule: `the id of PriceListCode ${String(byCode)} (${found.id})` };
  }
  return found;
}

/** The site whose targets continue the bare-Code state: `store.siteId` when `inventory.sites` lists it. */
export function homeSiteOf(config: { store: { siteId?: number | undefined }; inventory: { sites: ReadonlyArray<{ siteId: number }> } }): number | undefined {
  const own = config.store.siteId;
  return own !== undefined && config.inventory.sites.some((site) => site.siteId === own) ? own : undefined;
}

/** The key a target's state is kept under: the home site's targets keep the keys of the release before sites. */
export function stateKeyOf(key: string, homeSite: number | undefined): string {
  if (homeSite === undefined) return key;
  const { code, siteId, priceListId } = targetParts(key);
  return siteId === homeSite ? keyOf({ code, ...(priceListId === undefined ? {} : { priceListId }) }) : key;
}

/** A key naming no site (a job queued before the sites were listed) is the home site's target. */
export function homeTargetOf(key: string, homeSite: number | undefined): string {
  if (homeSite === undefined) return key;
  const { code, siteId, priceListId } = targetParts(key);
  return siteId === undefined ? keyOf({ code, siteId: homeSite, ...(priceListId === undefined ? {} : { priceListId }) }) : key;
}

/** The site ids of `inventory.sites`, in their order. */
export function siteIdsOf(inventory: { sites: ReadonlyArray<{ siteId: number }> }): number[] {
  return inventory.sites.map((site) => site.siteId);
}

/** Why a record's `SiteId` is not a target: with `inventory.sites`, it must be one of them. */
export function siteIssues(fields: Record<string, unknown>, sites: readonly number[], record?: string): ValidationIssue[] {
  const value = fields.SiteId;
  if (value === undefined || value === null || sites.length === 0 || sites.includes(value as number)) return [];
  return [{ record, field: 'SiteId', value, rule: `a site of inventory.sites (${sites.join(', ')})` }];
}

/** The targets a Code's stock is published to: each site of `sites`, else the default target. */
export function stockTargets(code: string, sites: readonly number[]): string[] {
  return sites.length === 0 ? [code] : sites.map((siteId) => keyOf({ code, siteId }));
}

/** Why a record's Code cannot be part of a target key; empty when it can. */
export function codeIssues(code: string, record?: string): ValidationIssue[] {
  return code.includes(SITE) || code.includes(LIST) ? [{ record, field: 'Code', value: code, rule: 'no control characters \\u001e or \\u001f' }] : [];
}

/** The key of the record's target (its price list's when it names one), or undefined when it has no Code. */
export function targetKey(record: Pick<SourceRecord, 'fields'>, lists: readonly PriceList[] = []): string | undefined {
  const { fields } = record;
  const code = fields.Code;
  if (typeof code !== 'string') return undefined;
  const siteId = fields.SiteId;
  const list = fields.PriceListCode === undefined && fields.PriceListId === undefined ? undefined : priceListOf(fields, lists);
  return keyOf({
    code,
    ...(typeof siteId === 'number' ? { siteId } : {}),
    ...(list !== undefined && 'id' in list ? { priceListId: list.id } : {}),
  });
}

/**
 * A record's values split by target: with a price list named, `Price` and `OfferPrice` go to the list's
 * target and the other fields to `(Code, SiteId)`; without, all to `(Code, SiteId)`. The fields naming
 * the target are left out. A record that names no site nor list gives one part, its fields as they are;
 * with `sites` (`inventory.sites`), a record naming no site gives the parts of each of them. Call only
 * with a record `priceListOf` and `siteIssues` accepted.
 */
export function splitByTarget(
  code: string,
  fields: Record<string, unknown>,
  lists: readonly PriceList[],
  sites: readonly number[] = [],
): Array<{ key: string; fields: Record<string, unknown> }> {
  const hasSite = fields.SiteId !== undefined;
  const named = fields.PriceListCode !== undefined || fields.PriceListId !== undefined;
  // The default target, as before targets (the cheap path: no copy of the fields).
  if (!hasSite && !named && sites.length === 0) return [{ key: code, fields }];
  // Several sites: a record naming none goes to each of them, its fields as they are.
  if (!hasSite && sites.length > 0) return sites.flatMap((siteId) => splitByTarget(code, { ...fields, SiteId: siteId }, lists));
  const siteId = typeof fields.SiteId === 'number' ? fields.SiteId : undefined;
  const list = named ? priceListOf(fields, lists) : undefined;
  const listId = list !== undefined && 'id' in list ? list.id : undefined;
  const base: Record<string, unknown> = {};
  const prices: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(fields)) {
    if (TARGET_FIELDS.has(field)) continue;
    if (listId !== undefined && PRICE_FIELDS.has(field)) prices[field] = value;
    else base[field] = value;
  }
  const out: Array<{ key: string; fields: Record<string, unknown> }> = [];
  const site = siteId === undefined ? {} : { siteId };
  if (Object.keys(base).some((field) => field !== 'Code')) out.push({ key: keyOf({ code, ...site }), fields: base });
  if (listId !== undefined && Object.keys(prices).length > 0) out.push({ key: keyOf({ code, ...site, priceListId: listId }), fields: prices });
  return out;
}

/** The identification a target's PUT carries besides its values: `Code`, `SiteId`, `PriceListId`/`PriceListCode`. */
export function targetBody(key: string, lists: readonly PriceList[]): Record<string, unknown> {
  const { code, siteId, priceListId } = targetParts(key);
  const body: Record<string, unknown> = { Code: code };
  if (siteId !== undefined) body.SiteId = siteId;
  if (priceListId !== undefined) {
    body.PriceListId = priceListId;
    const list = lists.find((entry) => entry.id === priceListId);
    if (list) body.PriceListCode = list.code;
  }
  return body;
}
