// The threat review of a change: the deterministic rules (rules.ts) over every file of the patch,
// the credential shapes of the secret scan (evidence/secrets.ts), and one verdict. Pure but for
// the secret scan's own rules; no network.
import { MASK } from '../redact.js'
import { scanText } from '../evidence/secrets.js'
import { parsePatch } from './patch.js'
import type { PatchFile } from './patch.js'
import { THREAT_CLASSES, fileFindings, joined } from './rules.js'
import type { ThreatClass, ThreatFinding } from './rules.js'

export type { ThreatClass, ThreatFinding } from './rules.js'
export { THREAT_CLASSES } from './rules.js'

export type ThreatVerdict = 'clean' | 'suspicious' | 'malicious'

/** At most this many findings are kept (high ones first); `total` counts all. */
export const MAX_THREAT_FINDINGS = 100

export interface ThreatReviewRecord {
  /** `rules`: the deterministic checks alone. */
  mode: 'rules'
  verdict: ThreatVerdict
  /** The SHA-256 of the diff.patch judged: the verdict holds for these bytes only. */
  diffSha256: string | null
  findings: ThreatFinding[]
  /** Findings in all (also those past MAX_THREAT_FINDINGS). */
  total: number
  /** Findings per class. */
  classes: Partial<Record<ThreatClass, number>>
  /** Files of the change read (every file section of diff.patch). */
  files: number
  /** Why the review could not read all of the change (then the verdict is at least suspicious). */
  notes: string[]
}

export interface ReviewOptions {
  diffSha256: string | null
  /**
   * Secrets: `scan` runs the secret scan's rules on the added lines (a patch not yet masked);
   * a list gives the files where the capture found and masked them (the patch is diff.patch, masked).
   */
  secrets: 'scan' | { path: string | null; detail: string }[]
  /** Changed files that diff.patch does not hold (max-diff-bytes, max-changed-files): not read. */
  unread?: number
}

/** The verdict of a list of findings: any high one is malicious, any other suspicious. */
export function verdictOf(findings: ThreatFinding[], notes: string[] = []): ThreatVerdict {
  if (findings.some((f) => f.severity === 'high')) return 'malicious'
  return findings.length > 0 || notes.length > 0 ? 'suspicious' : 'clean'
}

async function secretFindings(
  files: PatchFile[],
  secrets: ReviewOptions['secrets']
): Promise<ThreatFinding[]> {
  const out: ThreatFinding[] = []
  const finding = (path: string, line: number | null, why: string): ThreatFinding => ({
    path,
    line,
    side: 'RIGHT',
    class: 'credential',
    rule: 'secret-in-diff',
    severity: 'medium',
    why
  })
  if (secrets === 'scan') {
    for (const f of files) {
      if (f.added.length === 0) continue
      // As written, and with string splits joined ("ghp_" + "…").
      const lines = f.added.map((l) => l.text)
      const found = await scanText([...lines, ...lines.map(joined)].join('\n'), f.path)
      const rules = new Set<string>()
      for (const s of found) {
        if (rules.has(s.rule)) continue
        rules.add(s.rule)
        const at = f.added.find((l) => l.text.includes(s.value) || joined(l.text).includes(s.value))
        out.push(
          finding(f.path, at?.line ?? null, `${s.rule}: a token of this shape is in the change`)
        )
      }
    }
    return out
  }
  for (const v of secrets) {
    const f = files.find((x) => x.path === v.path)
    const at = f?.added.find((l) => l.text.includes(MASK))
    out.push(
      finding(
        v.path ?? '',
        at?.line ?? null,
        `${v.detail.split(':')[0]}: a token of this shape is in the change (masked in diff.patch)`
      )
    )
  }
  return out
}

const RANK = { high: 0, medium: 1 } as const
const MAX_WHY = 300

function capChars(text: string, max: number): string {
  const chars = [...text]
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : text
}

/** The threat review of a git patch (diff.patch's bytes). */
export async function reviewPatch(
  patch: Buffer | string,
  options: ReviewOptions
): Promise<ThreatReviewRecord> {
  const text = typeof patch === 'string' ? patch : patch.toString('utf8')
  const files = parsePatch(text)
  const all: ThreatFinding[] = []
  for (const f of files) all.push(...fileFindings(f))
  all.push(...(await secretFindings(files, options.secrets)))
  const notes: string[] = []
  if ((options.unread ?? 0) > 0)
    notes.push(
      `${options.unread} changed file(s) are not in diff.patch (max-diff-bytes or max-changed-files) and were not reviewed`
    )
  const ordered = all
    // A finding's words quote the change (a host, a dependency's name): bounded.
    .map((f) => ({ ...f, why: capChars(f.why, MAX_WHY) }))
    .map((f, i) => ({ f, i }))
    .sort((a, b) => RANK[a.f.severity] - RANK[b.f.severity] || a.i - b.i)
    .map((x) => x.f)
  const classes: Partial<Record<ThreatClass, number>> = {}
  for (const c of THREAT_CLASSES) {
    const n = all.filter((f) => f.class === c).length
    if (n > 0) classes[c] = n
  }
  return {
    mode: 'rules',
    verdict: verdictOf(all, notes),
    diffSha256: options.diffSha256,
    findings: ordered.slice(0, MAX_THREAT_FINDINGS),
    total: all.length,
    classes,
    files: files.length,
    notes
  }
}

const STRENGTH: Record<ThreatVerdict, number> = { clean: 0, suspicious: 1, malicious: 2 }

/**
 * The review a publisher shows: report.json's, unless the publisher's own reading of the same
 * (hash-checked) diff.patch finds a stronger verdict — then its own, saying so. report.json comes
 * from an artifact, which is hostile input: a report edited to say `clean` does not hide a finding.
 */
export async function recheckReview(
  stored: ThreatReviewRecord | undefined,
  patch: Buffer | null,
  facts: {
    diffSha256: string | null
    secrets: { path: string | null; detail: string }[]
    unread: number
  }
): Promise<ThreatReviewRecord | undefined> {
  if (patch === null) return stored
  const own = await reviewPatch(patch, { ...facts, secrets: facts.secrets })
  if (stored !== undefined && STRENGTH[stored.verdict] >= STRENGTH[own.verdict]) return stored
  if (stored === undefined && own.verdict === 'clean') return undefined
  return {
    ...own,
    notes: [
      `report.json ${stored === undefined ? 'has no threat review' : `says ${stored.verdict}`}; this verdict is the publisher's own reading of diff.patch`,
      ...own.notes
    ].slice(0, 10)
  }
}
