// The fresh-runner benchmark's table: medians of ours and the baseline per case, their ratio
// against the target, and the median breakdown of our time. Pure (results in, text out).

export const TARGETS = { cold: 1.5, restored: 1.1, published: 1.0, 'published-warm': 0.5 }
const TITLES = {
  cold: 'fresh runner: action start → first model request (no image, empty caches)',
  restored: 'the same, the agent image restored from the image cache',
  published: 'the same, the preset image pulled by digest (images/published.json)',
  'published-warm': 'the same, that image already on the runner'
}
const NAMES = { cold: 'P11', restored: 'P11r', published: 'P11p', 'published-warm': 'P11pw' }

/** @param {number[]} xs */
export function median(xs) {
  const s = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b)
  if (s.length === 0) return null
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * The phases of our run, in order, each ending at the first line of the action's log (after the
 * previous phase's end) that matches it. A phase whose line is missing (nothing was pulled, no
 * build) has no figure; its time counts in the next phase found.
 */
const EGRESS = /::group::egress/
export const PHASES = [
  ['start: Node, the bundle, inputs', /::group::image/],
  ['pull base', /^Status: (Downloaded newer image|Image is up to date)/, EGRESS],
  ['build: context, base metadata', /\[1\/2\] FROM/, EGRESS],
  ['build: RUN npm install -g (the CLI)', /\[2\/2\] RUN/, EGRESS],
  ['build: export, tag (restored: image found)', /::endgroup::/],
  ['workspace (+ scratch filesystem)', /::group::egress/],
  ['pull proxy image', /^Status: (Downloaded newer image|Image is up to date)/],
  ['proxy start', /^egress proxy up/]
]
/** A published image's run: pulled by digest (or found), its provenance, then as above. */
const PULLED = /^Status: (Downloaded newer image|Image is up to date)|already on this engine/
export const PUBLISHED_PHASES = [
  ['start: Node, the bundle, inputs', /::group::image/],
  ['pull agent image: download + unpack', PULLED, EGRESS],
  ['provenance check (skipped: no gh)', /^build provenance of/, EGRESS],
  ['image stage end, workspace', /::group::egress/],
  ['pull proxy image (layers shared)', /^Status: (Downloaded newer image|Image is up to date)/],
  ['proxy start', /^egress proxy up/]
]
/** The lines the inner script keeps for the breakdown. */
export const MARK_LINE = new RegExp(
  [...PHASES, ...PUBLISHED_PHASES].map(([, re]) => re.source).join('|') + '|^Download complete'
)

/**
 * @param {{ lines: [number, string][], first: number, restore?: { pullBase: number, downloadAndLoad: number } | null }} r
 * @returns {Record<string, number | null>}
 */
export function phases(r) {
  const out = {}
  let at = 0
  if (r.restore) {
    out['restore: pull base'] = r.restore.pullBase
    out['restore: download + docker load'] = r.restore.downloadAndLoad
    at = r.restore.pullBase + r.restore.downloadAndLoad
  }
  let i = 0
  const published = r.side === 'published' || r.side === 'published-warm'
  for (const [name, re, stop] of published ? PUBLISHED_PHASES : PHASES) {
    let j = i
    while (j < r.lines.length && !(r.lines[j][0] >= at && re.test(r.lines[j][1]))) {
      if (stop?.test(r.lines[j][1])) j = r.lines.length
      else j++
    }
    if (j >= r.lines.length) {
      out[name] = null
      continue
    }
    out[name] = r.lines[j][0] - at
    at = r.lines[j][0]
    i = j + 1
  }
  out['agent container → first request'] = r.first - at
  if (published) {
    // Within the pull: from the image stage's start to the last layer downloaded; the rest of the
    // pull is unpacking (layers download side by side and unpack one after another).
    const group = r.lines.findIndex(([, t]) => /::group::image/.test(t))
    const end = r.lines.findIndex(([, t]) => PULLED.test(t))
    const downloads = r.lines
      .slice(group + 1, end < 0 ? group + 1 : end)
      .filter(([, t]) => /^Download complete/.test(t))
    if (group >= 0 && downloads.length > 0) {
      const download = downloads[downloads.length - 1][0] - r.lines[group][0]
      out['  pull: of which downloading'] = download
      out['  pull: of which unpacking after the last download'] =
        r.lines[end][0] - downloads[downloads.length - 1][0]
    }
  }
  return out
}

/** Groups the runs by case: medians of ours, the baseline paired with it, and the phases. */
export function summarizeFresh(results) {
  const cases = [
    ...new Set(
      results.filter((r) => r.side !== 'baseline' && r.side !== 'overlap').map((r) => r.side)
    )
  ]
  return cases.map((c) => {
    const ours = results.filter((r) => r.side === c && r.ok)
    const base = results.filter((r) => r.side === 'baseline' && r.pair === c && r.ok)
    const a = median(ours.map((r) => r.ms))
    const b = median(base.map((r) => r.ms))
    const ph = ours.map(phases)
    const keys = ph.length ? Object.keys(ph[0]) : []
    return {
      case: c,
      title: TITLES[c] ?? c,
      runs: Math.min(ours.length, base.length),
      failed: results.filter((r) => (r.side === c || r.pair === c) && !r.ok).length,
      ours: a,
      baseline: b,
      ratio: a != null && b ? a / b : null,
      target: TARGETS[c] ?? null,
      phases: Object.fromEntries(keys.map((k) => [k, median(ph.map((p) => p[k]))])),
      baselinePhases: {
        'npm install -g': median(base.map((r) => r.breakdown?.install)),
        'claude start → first request': median(base.map((r) => r.breakdown?.start))
      }
    }
  })
}

const ms = (x) => (x == null ? '–' : `${Math.round(x)} ms`)

/** The lever check: the base's pull and the CLI's install side by side (null: not run). */
export function summarizeOverlap(results) {
  const runs = results.filter((r) => r.side === 'overlap' && r.ok)
  if (runs.length === 0) return null
  return {
    runs: runs.length,
    pull: median(runs.map((r) => r.breakdown?.pull)),
    install: median(runs.map((r) => r.breakdown?.install)),
    both: median(runs.map((r) => r.ms))
  }
}

/** The table (plain or Markdown) and the breakdown beneath it. */
export function formatFresh(summary, o) {
  const rows = summary.map((s) => {
    const ratio = s.ratio == null ? '–' : `${s.ratio.toFixed(2)}×`
    const verdict =
      s.ratio == null ? 'no result' : Number(s.ratio.toFixed(2)) <= s.target ? 'pass' : 'miss'
    return [
      NAMES[s.case] ?? s.case,
      s.title,
      String(s.runs),
      ms(s.ours),
      ms(s.baseline),
      ratio,
      `≤ ${s.target}×`,
      verdict
    ]
  })
  const head = [
    '',
    'benchmark',
    'runs',
    'median ours',
    'median baseline',
    'ratio',
    'target',
    'result'
  ]
  const lines = []
  if (o.markdown) {
    lines.push(`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`)
    for (const r of rows) lines.push(`| ${r.join(' | ')} |`)
  } else {
    const all = [head, ...rows]
    const w = head.map((_, i) => Math.max(...all.map((r) => r[i].length)))
    for (const r of all) lines.push(r.map((c, i) => c.padEnd(w[i])).join('  '))
  }
  lines.push('', `link: ${o.link}; load average: ${o.load}`)
  for (const s of summary) {
    lines.push('', `where our time goes (${s.case}, medians of each phase):`)
    for (const [k, v] of Object.entries(s.phases))
      if (v != null) lines.push(`  ${k.padEnd(44)} ${ms(v)}`)
    lines.push(`baseline (${s.case}):`)
    for (const [k, v] of Object.entries(s.baselinePhases)) lines.push(`  ${k.padEnd(44)} ${ms(v)}`)
    if (s.failed) lines.push(`  ${s.failed} run(s) failed and are left out`)
  }
  if (o.overlap) {
    const v = o.overlap
    lines.push(
      '',
      `lever check (${v.runs} run(s), medians): the base's pull and npm install -g of the CLI at the same time`,
      `  pull done after ${ms(v.pull)}, install done after ${ms(v.install)}, both after ${ms(v.both)}`
    )
  }
  return lines.join('\n') + '\n'
}
