/**
 * The hidden marker at the end of every review the action posts:
 * `<!-- airlock:report {"runId":"…","headSha":"…","diffSha256":"…"} -->` (rendered by
 * src/report/comment.ts), with `"partial":true` added when the review does not show the whole
 * diff. It ties a review to one run, one head commit and one diff. Only markers in reviews
 * authored by the action's own identity are ever believed.
 */
export interface Marker {
  runId: string
  headSha: string
  diffSha256: string | null
  /** The review shows only part of the diff: approving it must say so (approve.ts). */
  partial?: true
  /**
   * The report's diff changes protected paths (report.json's policy.protected): approving it
   * needs an acknowledgement. Absent in markers of earlier versions: then unknown, taken as true.
   */
  protected?: boolean
  /**
   * The threat review's verdict is suspicious or malicious: approving needs an acknowledgement
   * (`threats`). Absent in markers of versions without the review: no threat review to acknowledge.
   */
  threats?: boolean
}

const MARKER = /<!-- airlock:report (\{[A-Za-z0-9._:,"{}-]{0,400}\}) -->/g
/** Added to an earlier run's review when a newer run is published. */
export const SUPERSEDED = '<!-- airlock:superseded -->'

export function markerFor(m: Marker): string {
  return `<!-- airlock:report ${JSON.stringify({ runId: m.runId, headSha: m.headSha, diffSha256: m.diffSha256, ...(m.partial ? { partial: true } : {}), ...(m.protected !== undefined ? { protected: m.protected } : {}), ...(m.threats !== undefined ? { threats: m.threats } : {}) })} -->`
}

const KEYS = new Set(['runId', 'headSha', 'diffSha256', 'partial', 'protected', 'threats'])

/**
 * The last valid marker in a body, or null. Anything malformed — wrong types, bad SHAs, extra
 * keys — is no marker at all.
 */
export function parseMarker(body: string | null | undefined): Marker | null {
  if (typeof body !== 'string') return null
  let last: Marker | null = null
  for (const m of body.matchAll(MARKER)) {
    let v: unknown
    try {
      v = JSON.parse(m[1])
    } catch {
      continue
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) continue
    const o = v as Record<string, unknown>
    if (!['runId', 'headSha', 'diffSha256'].every((k) => k in o)) continue
    if (Object.keys(o).some((k) => !KEYS.has(k))) continue
    if ('partial' in o && o.partial !== true) continue
    if ('protected' in o && typeof o.protected !== 'boolean') continue
    if ('threats' in o && typeof o.threats !== 'boolean') continue
    if (typeof o.runId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(o.runId)) continue
    if (typeof o.headSha !== 'string' || !/^[0-9a-f]{40}$/.test(o.headSha)) continue
    if (
      o.diffSha256 !== null &&
      (typeof o.diffSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(o.diffSha256))
    )
      continue
    last = {
      runId: o.runId,
      headSha: o.headSha,
      diffSha256: o.diffSha256,
      ...(o.partial === true ? { partial: true as const } : {}),
      ...(typeof o.protected === 'boolean' ? { protected: o.protected } : {}),
      ...(typeof o.threats === 'boolean' ? { threats: o.threats } : {})
    }
  }
  return last
}

/** Whether two markers name the same evidence: the same run, head and diff. */
export function sameEvidence(a: Marker | null | undefined, b: Marker): boolean {
  return (
    a !== null &&
    a !== undefined &&
    a.runId === b.runId &&
    a.headSha === b.headSha &&
    a.diffSha256 === b.diffSha256
  )
}

export function isSuperseded(body: string): boolean {
  return body.includes(SUPERSEDED)
}

/** The body of an earlier run's review once a newer run is published. */
export function supersededBody(body: string, newerRunId: string): string {
  if (isSuperseded(body)) return body
  return `> [!NOTE]\n> Superseded by run \`${newerRunId.replace(/[^A-Za-z0-9._-]/g, '')}\`: this evidence is no longer current.\n${SUPERSEDED}\n\n${body}`
}
