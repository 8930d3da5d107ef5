import { z } from 'zod';

/** A product record: the spec does not show its fields, so every field is kept as received. */
export const productSchema = z.looseObject({});
export type Product = z.infer<typeof productSchema>;
