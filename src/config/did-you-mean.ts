/**
 * The closest known name to a mistyped one, for "did you mean" hints. Damerau-Levenshtein (optimal
 * string alignment) distance, case-insensitive, so a swapped pair of letters (`inventroy`) counts once.
 */

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let j = 0; j <= b.length; j += 1) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    const row = rows[i] as number[];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate nearest to `name`, when it is close enough to be a typo: at most 2 edits, and at most a
 * third of the name's length, so a short key is not matched to an unrelated short one.
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  const limit = Math.min(2, Math.max(1, Math.floor(name.length / 3)));
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** ` (did you mean "dryRun"?)` when `name` is a typo of one of `candidates`, else an empty string. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const suggestion = closestName(name, candidates);
  return suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
}
