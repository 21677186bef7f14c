// "Did you mean": the known words closest to a mistyped one — the one rule for every suggestion
// (a CLI flag or command, a policy file's setting, a file name next to a missing one).

/** Optimal string alignment distance (Levenshtein with adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0))
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[a.length][b.length]
}

/**
 * The closest candidates to `word` (at most 3, closest first), compared without case: those
 * within a third of its length in edits (at least one edit; a swap of two neighbours is one), or
 * that start with it (a shortened name, three characters or more). Empty when nothing is close.
 */
export function suggest(word: string, candidates: readonly string[]): string[] {
  const w = word.toLowerCase()
  const scored = candidates
    .map((c) => ({ c, d: editDistance(w, c.toLowerCase()) }))
    .filter(
      ({ c, d }) => d <= Math.max(1, Math.floor(w.length / 3)) || (w.length >= 3 && c.startsWith(w))
    )
    .sort((x, y) => x.d - y.d || x.c.localeCompare(y.c))
  return scored.slice(0, 3).map((s) => s.c)
}

/** " Did you mean X?" / " Did you mean X or Y?" or '' when nothing is close. */
export function didYouMean(word: string, candidates: readonly string[], prefix = ''): string {
  const s = suggest(word, candidates).map((c) => prefix + c)
  if (s.length === 0) return ''
  const list = s.length === 1 ? s[0] : `${s.slice(0, -1).join(', ')} or ${s[s.length - 1]}`
  return ` Did you mean ${list}?`
}
