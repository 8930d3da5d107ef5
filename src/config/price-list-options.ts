/**
 * `inventory.priceLists` (issue 20): the store's price lists, so that an ERP record may name its list by
 * `PriceListCode` or `PriceListId` (src/sync/inventory/target-key.ts). Kept apart from schema.ts.
 */
import { z } from 'zod';

/**
 * The store's price lists, each `{ id, code }` as the store knows it. A record naming a list not here is
 * refused. No list named: the store's default list. @defaultValue []
 */
export const priceListsOption = z
  .array(z.object({ id: z.number().int().positive(), code: z.string().min(1) }).strict())
  .default([])
  .superRefine((lists, ctx) => {
    const ids = new Set<number>();
    const codes = new Set<string>();
    lists.forEach((list, i) => {
      if (ids.has(list.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `price list id ${list.id} is listed twice` });
      if (codes.has(list.code)) ctx.addIssue({ code: 'custom', path: [i, 'code'], message: `price list code ${list.code} is listed twice` });
      ids.add(list.id);
      codes.add(list.code);
    });
  });
