/**
 * `sales.kits` (issue 26): how a sale line of a kit (a code `inventory.kits` composes, or a line the
 * store marks `IsCombo`) reaches the ERP. Kept apart from schema.ts.
 */
import { z } from 'zod';

/** `sales.kits`. */
export const salesKitsOption = z
  .object({
    /**
     * `kit`: the sale is exported as sold, the kit line as it is (ERPNext explodes a Product Bundle into
     * packed items, Odoo a phantom BoM at delivery). `components`: each kit line is replaced by one line
     * per component, its quantity multiplied by the kit line's, for ERPs that book only stock items.
     * @defaultValue 'kit'
     */
    export: z.enum(['kit', 'components']).default('kit'),
  })
  .prefault({});

export type SalesKitsOption = z.infer<typeof salesKitsOption>;

/** `sales.kits.export: components` needs compositions to explode kit lines with (the config's superRefine calls it). */
export function checkKitExport(config: { sales: { kits: SalesKitsOption }; inventory: { kits: readonly unknown[] } }, ctx: z.RefinementCtx): void {
  if (config.sales.kits.export === 'components' && config.inventory.kits.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['sales', 'kits', 'export'],
      message: 'components: exports kit lines as their components, but inventory.kits has no source to read the compositions from (add one, or export as kit)',
    });
  }
}
