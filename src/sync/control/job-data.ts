/**
 * What a control job asks for. The same zod schema validates jobs from the dashboard's Add-job form,
 * from `POST /admin/resync/...` and from the worker, and yields the JSON schema that drives the form.
 */
import { z } from 'zod';

import { didYouMean } from '../../config/did-you-mean.js';
import { formatPath } from '../../config/unknown-keys.js';
import { type ValidationIssue, valueAt } from '../../errors.js';

const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD')
  .refine((value) => {
    // Date.parse rolls 2024-02-30 over to March; a round trip catches it.
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
  }, 'a real calendar date');

/** Who asked; storesync fills it from the admin login, so the job shows it next to the audit line. */
const requestedBy = z.string().max(200).optional().describe('Filled in by storesync with the admin user');

/** Reconcile inventory: every item, or only `skus`; `dryRun` reports the drift without writing. */
export const inventoryResyncSchema = z
  .object({
    action: z.literal('inventory-reconcile'),
    skus: z.array(z.string().min(1)).max(10_000).default([]).describe('Only these SKUs; empty: every item'),
    source: z.string().min(1).optional().describe('Only this inventory source (inventory.sources[].name); unset: every enabled source'),
    dryRun: z.boolean().default(false).describe('Report the differences without writing to the store'),
    force: z.boolean().default(false).describe('Write every item, even those already equal'),
    confirmOrphans: z
      .boolean()
      .default(false)
      .describe('Act on store items no ERP source has (inventory.reconcile.orphans) even when the mass guard holds them'),
    requestedBy,
  })
  .strict();

/** Pull the store's sales of a date window again (already exported sales are not exported twice). */
export const salesResyncSchema = z
  .object({
    action: z.literal('sales-pull'),
    from: isoDate.describe('First day of the window, YYYY-MM-DD'),
    to: isoDate.describe('Last day of the window, YYYY-MM-DD'),
    dryRun: z.boolean().default(false).describe('List the sales without exporting them'),
    requestedBy,
  })
  .strict()
  .refine((value) => value.from <= value.to, { message: 'from must not be after to', path: ['to'] });

/** Every control job. */
export const controlJobSchema = z.union([inventoryResyncSchema, salesResyncSchema]);

/** A validated inventory resync request. */
export type InventoryResync = z.infer<typeof inventoryResyncSchema>;
/** A validated sales re-pull request. */
export type SalesResync = z.infer<typeof salesResyncSchema>;
/** A validated control job, defaults filled in. */
export type ControlJobData = z.infer<typeof controlJobSchema>;

/** What the Add-job form starts from: a full reconcile. */
const FORM_DEFAULT = { action: 'inventory-reconcile', skus: [], dryRun: false, force: false, confirmOrphans: false };

/** The JSON schema bull-board uses for the control queue's Add-job form (its default fills the form). */
export function controlJobJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(controlJobSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    title: 'storesync resync',
    description:
      'action "inventory-reconcile" (all items, or the listed skus; dryRun: report only) or "sales-pull" (from/to YYYY-MM-DD)',
    default: FORM_DEFAULT,
    examples: [
      FORM_DEFAULT,
      { action: 'inventory-reconcile', skus: ['SKU-1', 'SKU-2'] },
      { action: 'inventory-reconcile', dryRun: true },
      { action: 'sales-pull', from: '2024-01-01', to: '2024-01-31' },
    ],
  };
}

/** Validates job data; issues name the field (`skus[0]`, `from`) the way the rest of storesync does. */
export function parseControlJob(
  data: unknown,
): { ok: true; value: ControlJobData } | { ok: false; issues: ValidationIssue[] } {
  const parsed = controlJobSchema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, issues: zodIssues(parsed.error, data) };
}

/** Turns zod issues into storesync's ValidationIssue shape; an unknown field is named with the known one it is closest to. */
export function zodIssues(error: z.ZodError, input: unknown): ValidationIssue[] {
  // A union reports each branch; the branch matching `action` says what is really wrong.
  const issues = error.issues.flatMap((issue) =>
    issue.code === 'invalid_union' ? pickBranch(issue.errors, input) : [issue],
  );
  return issues.flatMap((issue): ValidationIssue[] => {
    if (issue.code === 'unrecognized_keys') {
      const known = issue.path.length === 0 ? knownFields(input) : [];
      return issue.keys.map((key) => {
        const path = [...issue.path, key];
        return { field: formatPath(path), value: valueAt(input, path), rule: `not a known field${didYouMean(key, known)}` };
      });
    }
    return [{ field: formatPath(issue.path) || '(body)', value: valueAt(input, issue.path), rule: issue.message.replace(/^Invalid input: /, '') }];
  });
}

/** The fields of the control job that `input`'s action asks for. */
function knownFields(input: unknown): string[] {
  const action = (input as { action?: unknown } | null)?.action;
  if (action === 'sales-pull') return Object.keys(salesResyncSchema.shape);
  if (action === 'inventory-reconcile') return Object.keys(inventoryResyncSchema.shape);
  return [];
}

function pickBranch(branches: z.core.$ZodIssue[][], input: unknown): z.core.$ZodIssue[] {
  const action = (input as { action?: unknown } | null)?.action;
  const matching = branches.find((issues) => !issues.some((issue) => issue.path[0] === 'action'));
  if (matching && (action === 'inventory-reconcile' || action === 'sales-pull')) return matching;
  return [
    {
      code: 'custom',
      path: ['action'],
      message: 'one of "inventory-reconcile", "sales-pull"',
      input: action,
    } as z.core.$ZodIssue,
  ];
}


/**
 * A readable job name for the dashboard: `reconcile`, `reconcile:dry-run`, `reconcile:source=erp`,
 * `reconcile:A-1,B-2`, `sales-pull:2024-01-01..2024-01-31`.
 */
export function controlJobName(job: ControlJobData): string {
  if (job.action === 'sales-pull') return `sales-pull:${job.from}..${job.to}${job.dryRun ? ':dry-run' : ''}`;
  const skus = job.skus.length === 0 ? '' : `:${job.skus.slice(0, 5).join(',')}${job.skus.length > 5 ? `,+${job.skus.length - 5}` : ''}`;
  const source = job.source === undefined ? '' : `:source=${job.source}`;
  return `reconcile${job.dryRun ? ':dry-run' : ''}${job.confirmOrphans ? ':confirm-orphans' : ''}${source}${skus}`;
}
