export interface FreshResult {
  round: number
  side: string
  pair?: string
  ok: boolean
  ms?: number
  first?: number
  lines?: [number, string][]
  restore?: { pullBase: number; downloadAndLoad: number } | null
  breakdown?: { install?: number; start?: number; pull?: number }
}
export interface FreshSummary {
  case: string
  title: string
  runs: number
  failed: number
  ours: number | null
  baseline: number | null
  ratio: number | null
  target: number | null
  phases: Record<string, number | null>
  baselinePhases: Record<string, number | null>
}
export const TARGETS: Record<string, number>
export const PHASES: [string, RegExp, RegExp?][]
export const MARK_LINE: RegExp
export function median(xs: (number | null | undefined)[]): number | null
export function phases(r: {
  lines: [number, string][]
  first: number
  restore?: { pullBase: number; downloadAndLoad: number } | null
}): Record<string, number | null>
export function summarizeFresh(results: FreshResult[]): FreshSummary[]
export interface OverlapSummary {
  runs: number
  pull: number | null
  install: number | null
  both: number | null
}
export function summarizeOverlap(results: FreshResult[]): OverlapSummary | null
export function formatFresh(
  summary: FreshSummary[],
  o: { markdown: boolean; link: string; load: string; overlap?: OverlapSummary | null }
): string
