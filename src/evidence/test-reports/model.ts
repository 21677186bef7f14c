// The normalized model every test report format is read into, and the small field readers the
// format modules share.

export type CaseStatus = 'passed' | 'failed' | 'skipped'

export interface TestCase {
  id: string
  name: string
  suite: string
  status: CaseStatus
  durationMs?: number
  message?: string
  /** Failed in the first run of the test command and passed when it was re-run once. */
  flaky?: boolean
}

export type ReportFormat = 'junit' | 'jest-json' | 'pytest-json' | 'go-test-json'

export interface TestReportSource {
  path: string
  format: ReportFormat | 'unknown'
  status: 'ok' | 'missing' | 'malformed' | 'refused'
  detail?: string
  truncated?: boolean
  /** How many test cases this file contributed. */
  cases?: number
  /**
   * The copy of the file kept in the output folder (bound in provenance.json like every evidence
   * file): its path there, its size, and whether it was cut at the cap.
   */
  kept?: { path: string; bytes: number; truncated?: boolean }
}

export interface TestSummary {
  total: number
  passed: number
  failed: number
  skipped: number
  /** Tests that failed first and passed on the one re-run (counted as passed above). */
  flaky?: number
}

export interface TestResults {
  summary: TestSummary
  cases: TestCase[]
  sources: TestReportSource[]
}

export interface ParsedReport {
  format: ReportFormat | 'unknown'
  cases: TestCase[]
  /** Set when the file could not be understood: why. Cases read before the error are kept. */
  error?: string
  /** A note on a report that was read (e.g. lines that were not understood). */
  detail?: string
}

/** Longest failure message kept per case. */
export const MAX_MESSAGE = 2000
/** Where the workspace is inside the sandbox: stripped from file names in reports. */
const SANDBOX_ROOT = '/workspace/'

export function summarize(cases: TestCase[]): TestSummary {
  const s: TestSummary = { total: cases.length, passed: 0, failed: 0, skipped: 0 }
  let flaky = 0
  for (const c of cases) {
    s[c.status]++
    if (c.flaky === true) flaky++
  }
  if (flaky > 0) s.flaky = flaky
  return s
}

/** A JSON object or parsed XML element. */
export type Node = Record<string, unknown>

export function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined
}

export function relFile(file: string): string {
  return file.startsWith(SANDBOX_ROOT) ? file.slice(SANDBOX_ROOT.length) : file
}

export function clip(message: string | undefined): { message?: string } {
  return message === undefined || message === '' ? {} : { message: message.slice(0, MAX_MESSAGE) }
}
