/**
 * What the kits code uses of an inventory runtime: declared here, narrower than `InventoryRuntime`
 * (which holds the kit catalog, so importing it from here would make a cycle).
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { Config } from '../../../../config/schema.js';
import type { TypedEmitter } from '../../../../events.js';
import type { Logger } from '../../../../log.js';
import type { InventoryEvents, InventoryJobData } from '../../types.js';

/** The handles the kits code works with. */
export interface KitRuntime {
  readonly redis: Redis;
  readonly config: Config;
  readonly queue: Queue<InventoryJobData>;
  readonly logger: Logger;
  readonly events: TypedEmitter<InventoryEvents>;
  now(): number;
}
