/**
 * Kits, bundles and packs: listings the ERP keeps no stock of, made of components it does. A kit's
 * figure is `min over its components of floor(sellable(component) ÷ quantity)` (`kit-stock.ts`); the
 * compositions come from `inventory.kits` sources (`refresh.ts`, and their change feed: `changes.ts`) and live in Redis (`catalog.ts`); a
 * component's change re-queues its kits (`propagation.ts`); a kit sold reserves its components and may be
 * exported as them (`sale-lines.ts`).
 */
export { applyKitChanges, type CompositionWrite, type KitCatalog, type KitChanges, redisKitCatalog, unreadKitSources, writeComposition } from './catalog.js';
export { kitBatch, kitCursors, pollKitChanges } from './changes.js';
export { checkKitRow, type ComponentFigure, cyclesOf, groupRows, isCycle, type KitComponent, type KitCycle, kitFigure, type KitRow, resolveAll,type Resolved } from './composition.js';
export { describeKit, type ExplainedKit, explainKit } from './explain.js';
export { firstSalesPullKey, type KitStock, planKitStock, readKitStocks, resetFirstSalesPull, waitsForFirstSalesPull } from './kit-stock.js';
export { requeueKits } from './propagation.js';
export { refreshKits } from './refresh.js';
export type { KitRuntime } from './runtime.js';
export { componentSale, type KitExploder, reservedLines, type SoldLine, soldLines } from './sale-lines.js';
