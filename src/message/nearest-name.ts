// The valid name a misspelt one was meant to be ("did you mean"), for the CLI's options, a message's fields and config keys.

/** Edit distance (insert, delete, substitute, swap of neighbours), for "did you mean"; three rows of the table kept, not all of it. */
export function distance(a: string, b: string): number {
  let twoBack: number[] = [];
  let back = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(back[j] + 1, row[j - 1] + 1, back[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, twoBack[j - 2] + 1);
      row.push(d);
    }
    twoBack = back;
    back = row;
  }
  return back[b.length];
}

/**
 * The valid name nearest to `given` (case ignored), if it is near enough to be a typo of it: at most
 * `maxDistance(given)` edits, by default 2 or a third of its length.
 */
export function closest(given: string, names: readonly string[], maxDistance = (g: string) => Math.max(2, Math.floor(g.length / 3))): string | undefined {
  const most = maxDistance(given);
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    // Names whose length alone is too far are not measured: a key of a million characters costs no table of a million rows.
    if (Math.abs(name.length - given.length) > most) continue;
    const d = distance(given.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  return best && best.d <= most ? best.name : undefined;
}

/**
 * Where an unknown key is only dropped unless it is a misspelling (a message's fields, a config's
 * settings): at most one edit (or one swap of neighbours) from a known name of up to 5 characters,
 * two beyond. Near enough for `prioirty`, `tgas`, `Param1` or `basic_auht`, far enough that a key a
 * classic client or operator adds for its own use (`customer`, `job`, `notes`) is dropped as the classic daemon dropped it.
 */
export const typoDistance = (given: string): number => (given.length <= 5 ? 1 : 2);
