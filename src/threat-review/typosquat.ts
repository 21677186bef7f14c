// Typosquats: a dependency name that is not one of the widely used names the package ships
// (popular-packages.json) but reads like one: one or two edits away (a transposition counts as
// one), the same but for confusable characters (Cyrillic letters, 0/o, 1/l, rn/m), the same but
// for its separators, or a popular name with a common prefix or suffix. Pure.
import popular from './popular-packages.json' with { type: 'json' }

export type Ecosystem = 'npm' | 'pypi' | 'go' | 'crates'

const LISTS: Record<Ecosystem, readonly string[]> = {
  npm: popular.npm,
  pypi: popular.pypi,
  go: popular.go,
  crates: popular.crates
}

/** PyPI treats runs of `-`, `_` and `.` as one `-`, case-insensitively (PEP 503). */
export function normalizeName(eco: Ecosystem, name: string): string {
  const n = name.toLowerCase()
  return eco === 'pypi' || eco === 'crates' ? n.replace(/[-_.]+/g, '-') : n
}

const sets = new Map<Ecosystem, Map<string, string>>()
/** The ecosystem's popular names, normalized, each with its name as published. */
function known(eco: Ecosystem): Map<string, string> {
  let s = sets.get(eco)
  if (s === undefined) {
    s = new Map(LISTS[eco].map((n) => [normalizeName(eco, n), n]))
    sets.set(eco, s)
  }
  return s
}

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions), stopping early
 * once it must exceed `max` (then `max + 1`).
 */
export function editDistance(a: string, b: string, max = 2): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  const prev2: number[] = new Array<number>(b.length + 1).fill(0)
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  let cur = new Array<number>(b.length + 1).fill(0)
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i
    let rowMin = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, prev2[j - 2] + 1)
      cur[j] = v
      if (v < rowMin) rowMin = v
    }
    if (rowMin > max) return max + 1
    for (let j = 0; j <= b.length; j++) prev2[j] = prev[j]
    ;[prev, cur] = [cur, prev]
  }
  return prev[b.length]
}

/** Letters that look like Latin ones (Cyrillic, Greek, fullwidth…) and digit/letter look-alikes. */
const CONFUSABLE: Record<string, string> = {
  а: 'a',
  е: 'e',
  о: 'o',
  р: 'p',
  с: 'c',
  х: 'x',
  у: 'y',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ӏ: 'l',
  һ: 'h',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  ο: 'o',
  ρ: 'p',
  ν: 'v',
  τ: 't',
  ι: 'i',
  κ: 'k',
  '0': 'o',
  '1': 'l',
  '3': 'e',
  '5': 's',
  '7': 't',
  ı: 'i',
  ł: 'l',
  ø: 'o'
}

/** The name as it looks: confusable characters folded, `rn`→`m`, `vv`→`w`, `l`/`i` as one. */
export function skeleton(name: string): string {
  return [...name.normalize('NFKC').toLowerCase()]
    .map((c) => CONFUSABLE[c] ?? c)
    .join('')
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(/[il|]/g, 'l')
}

const AFFIXES = [
  '-js',
  '.js',
  'js',
  '-node',
  'node-',
  'py',
  'python-',
  '-python',
  'py-',
  '-py',
  '-dev',
  '2',
  '3'
]

export interface Squat {
  name: string
  like: string
  why: string
}

/** Why `name` reads like a popular package of `eco` without being one, or null. */
export function typosquat(eco: Ecosystem, name: string): Squat | null {
  const n = normalizeName(eco, name)
  const list = known(eco)
  if (list.has(n)) return null
  const squat = (like: string, why: string): Squat => ({ name, like: list.get(like) ?? like, why })
  if (/[^\x21-\x7e]/.test(name)) {
    for (const p of list.keys())
      if (skeleton(p) === skeleton(n))
        return squat(p, `uses characters that look like "${p}" (not plain ASCII)`)
    return squat('', 'a dependency name with characters outside plain ASCII')
  }
  const bare = (s: string): string => s.replace(/[-_.]/g, '')
  for (const p of list.keys()) {
    if (skeleton(p) === skeleton(n))
      return squat(p, `differs from "${p}" only by look-alike characters`)
    if (bare(p) === bare(n)) return squat(p, `differs from "${p}" only by its separators`)
  }
  let best: { p: string; d: number } | null = null
  for (const p of list.keys()) {
    const max = Math.min(n.length, p.length) >= 8 ? 2 : Math.min(n.length, p.length) >= 5 ? 1 : 0
    if (max === 0) continue
    const d = editDistance(n, p, max)
    if (d <= max && (best === null || d < best.d)) best = { p, d }
  }
  if (best !== null)
    return squat(
      best.p,
      `${best.d === 1 ? 'one edit' : 'two edits'} away from the widely used "${best.p}"`
    )
  if (eco === 'npm' || eco === 'pypi') {
    for (const p of list.keys()) {
      if (p.length < 4 || p.includes('/')) continue
      for (const a of AFFIXES)
        if (n === p + a || n === a + p)
          return squat(p, `the widely used "${p}" with "${a}" added, a common squatting pattern`)
    }
  }
  return null
}
