/** zod schemas of every store resource, one file per resource: the single source of truth for their types. */
export * from './auth.js';
export * from './client.js';
export * from './inventory.js';
export * from './product.js';
export * from './sale.js';
export * from './user.js';
