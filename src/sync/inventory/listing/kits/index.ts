/**
 * Kits, bundles and packs: listings the ERP keeps no stock of, made of components it does. A kit's
 * figure is `min over its components of floor(sellable(component) ÷ quantity)`; the compositions come
 * from `inventory.kits` sources and live in Redis (`catalog.ts`).
 */
export { type CompositionWrite, type KitCatalog, redisKitCatalog, writeComposition } from './catalog.js';
export { checkKitRow, isCycle, type KitComponent, type KitCycle, kitFigure, type KitRow, type Resolved } from './composition.js';
