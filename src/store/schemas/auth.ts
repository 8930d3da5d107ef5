/** Schema of the authentication result. */
import { z } from 'zod';

import { int, str } from './fields.js';

/** Response of `GET /Api/Auth/`: `data` is the hash; `status` "0" (or 0, or absent) is success. */
export const authResultSchema = z.looseObject({
  status: z.union([z.string(), z.number()]).nullish(),
  message: str,
  data: str,
  site: int,
});
export type AuthResult = z.infer<typeof authResultSchema>;
