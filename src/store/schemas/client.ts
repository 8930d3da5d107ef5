import { z } from 'zod';

/** A client record: the spec does not show its fields, so every field is kept as received. */
export const clientSchema = z.looseObject({});
export type Client = z.infer<typeof clientSchema>;
