// What a threat rule finds: the classes, the finding record, and the shape of a line rule.

export const THREAT_CLASSES = [
  'outbound-endpoint',
  'process-execution',
  'encoded-blob',
  'install-hook',
  'typosquat',
  'credential',
  'test-weakening',
  'ci-or-agent-file'
] as const
export type ThreatClass = (typeof THREAT_CLASSES)[number]

/** high: what a change rarely does for an ordinary reason (the verdict is malicious). */
export type ThreatSeverity = 'high' | 'medium'

export interface ThreatFinding {
  path: string
  /** The line in the new file (RIGHT) or, for a removed line, the old file (LEFT); null: the file. */
  line: number | null
  side: 'RIGHT' | 'LEFT'
  class: ThreatClass
  rule: string
  severity: ThreatSeverity
  why: string
  /** The text that matched (at most 120 characters; never for credentials). */
  match?: string
}

const MAX_MATCH = 120

/** The text of a finding's match, cut to at most 120 characters. */
export function cut(text: string): string {
  const chars = [...text]
  return chars.length > MAX_MATCH ? chars.slice(0, MAX_MATCH - 1).join('') + '…' : text
}

// A line rule: a pattern that runs on each added line and on its joined form (line-reading.ts).

export interface LineRule {
  class: ThreatClass
  rule: string
  severity: ThreatSeverity
  re: RegExp
  why: string
  /** Which files it reads (default: code and configuration, not docs or lockfiles). */
  files?: (p: string) => boolean
  /** Runs on comment lines too. */
  comments?: boolean
  /** A further check of the match. */
  accept?: (m: RegExpExecArray) => boolean
}
