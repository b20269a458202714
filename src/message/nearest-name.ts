// The valid name a misspelt one was meant to be ("did you mean"), for the CLI's options and the fields of a message.

/** Edit distance (insert, delete, substitute, swap of neighbours), for "did you mean". */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The valid name nearest to `given` (case ignored), if it is near enough to be a typo of it: at most
 * `maxDistance(given)` edits, by default 2 or a third of its length.
 */
export function closest(given: string, names: readonly string[], maxDistance = (g: string) => Math.max(2, Math.floor(g.length / 3))): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = distance(given.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= maxDistance(given) ? best.name : undefined;
}
