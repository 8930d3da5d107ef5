/**
 * The guard against mass effects (issue 22): one read that would zero, unpublish or delete a large share
 * of what was published is more likely a broken source (an empty file, a truncated export, a wrong
 * filter) than a real event, so such an effect is held for a person to confirm. Pure, so that every
 * flow that can have a mass effect (snapshot diff, reconcile orphans) decides the same way.
 */

/** Below this many SKUs an effect never counts as mass, whatever its fraction of a small catalogue. */
export const MASS_GUARD_MIN_COUNT = 10;

/**
 * True when affecting `count` of `total` SKUs is a mass effect to hold: more than `maxFraction` of the
 * total and more than `minCount` SKUs. A `total` of 0 (nothing known before) holds any count over
 * `minCount`.
 */
export function exceedsMassGuard(
  count: number,
  total: number,
  maxFraction: number,
  minCount: number = MASS_GUARD_MIN_COUNT,
): boolean {
  if (count <= minCount) return false;
  if (total <= 0) return true;
  return count / total > maxFraction;
}
