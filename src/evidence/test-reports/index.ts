// Test reports the test command left behind: each read safely from the result tree, its format
// recognized from the content, and normalized into the model of ./model.ts.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { Redactor } from '../../redact.js'
import { readInside } from '../safe-read.js'
import { parseGoTestJson } from './go-test-json.js'
import { parseJestJson } from './jest-json.js'
import { parseJUnit } from './junit.js'
import type {
  ParsedReport,
  ReportFormat,
  TestCase,
  TestReportSource,
  TestResults
} from './model.js'
import { isNode, summarize } from './model.js'
import { parsePytestJson } from './pytest-json.js'

export type {
  CaseStatus,
  ParsedReport,
  ReportFormat,
  TestCase,
  TestReportSource,
  TestResults,
  TestSummary
} from './model.js'
export { summarize } from './model.js'

export const MAX_REPORT_BYTES = 20 * 1024 * 1024

/** The folder of the output folder that holds the kept copies of the report files. */
export const KEPT_REPORTS_DIR = 'test-reports'

/** Where and how the report files read are kept as evidence. */
export interface KeepReports {
  /** The output folder: copies go to `<outDir>/test-reports/<the configured path>`. */
  outDir: string
  /** At most this many bytes of each file are kept (the phase logs' cap). */
  maxBytes: number
  /** Secret values masked in the copies, as in every file of the output folder. */
  secretValues: string[]
}

/**
 * Reads each configured report from the result tree (safely) and normalizes it; with `keep`, a
 * copy of every file read (capped, secrets masked) goes to the output folder.
 */
export async function collectTestReports(
  root: string,
  paths: string[],
  keep?: KeepReports
): Promise<TestResults> {
  const cases: TestCase[] = []
  const sources: TestReportSource[] = []
  const redactor = keep ? new Redactor(keep.secretValues, true) : null
  for (const p of paths) {
    const read = await readInside(root, p, MAX_REPORT_BYTES)
    if (!read.ok) {
      sources.push({
        path: p,
        format: 'unknown',
        status: read.reason === 'missing' ? 'missing' : 'refused',
        detail: read.detail
      })
      continue
    }
    const kept =
      keep && redactor ? await keepCopy(keep, redactor, p, read.data, read.truncated) : undefined
    const parsed = parseTestReport(read.data)
    cases.push(...parsed.cases)
    sources.push({
      path: p,
      format: parsed.format,
      status: parsed.error === undefined ? 'ok' : 'malformed',
      ...(parsed.error !== undefined ? { detail: parsed.error.slice(0, 300) } : {}),
      ...(parsed.detail !== undefined && parsed.error === undefined
        ? { detail: parsed.detail }
        : {}),
      ...(read.truncated ? { truncated: true } : {}),
      cases: parsed.cases.length,
      ...(kept ? { kept } : {})
    })
  }
  return { summary: summarize(cases), cases, sources }
}

/**
 * Writes the copy of one report file: at most `maxBytes`, secret values masked (byte-wise, so a
 * file that is not UTF-8 is kept as it was but for the masks). The configured path is relative and
 * inside the repository (checked at the edge), so the copy stays inside the kept folder.
 */
async function keepCopy(
  keep: KeepReports,
  redactor: Redactor,
  rel: string,
  data: Buffer,
  readTruncated: boolean
): Promise<TestReportSource['kept']> {
  const base = path.join(keep.outDir, KEPT_REPORTS_DIR)
  const target = path.join(base, rel)
  if (!target.startsWith(base + path.sep)) return undefined
  const cut = data.length > keep.maxBytes
  const bytes = Buffer.from(
    redactor.redact(data.subarray(0, keep.maxBytes).toString('latin1')),
    'latin1'
  )
  await fs.promises.mkdir(path.dirname(target), { recursive: true })
  await fs.promises.writeFile(target, bytes)
  return {
    path: `${KEPT_REPORTS_DIR}/${rel.split(path.sep).join('/')}`,
    bytes: bytes.length,
    ...(cut || readTruncated ? { truncated: true } : {})
  }
}

/**
 * Recognizes the format from the content (never from the name the agent gave the file) and
 * normalizes it. Never throws: a file that is not a report is returned with `error` set.
 */
export function parseTestReport(data: Buffer): ParsedReport {
  const text = data.toString('utf8').replace(/^\ufeff/, '')
  const trimmed = text.trimStart()
  if (trimmed === '') return { format: 'unknown', cases: [], error: 'the file is empty' }
  let format: ReportFormat | 'unknown' = 'unknown'
  try {
    if (trimmed.startsWith('<')) {
      format = 'junit'
      return { format, cases: parseJUnit(text) }
    }
    if (/^\{\s*"(Time|Action)"/.test(trimmed)) return parseGoTestJson(text)
    if (trimmed.startsWith('{')) {
      const head = text.slice(0, 4096)
      if (/"testResults"/.test(head)) format = 'jest-json'
      else if (/"(nodeid|tests)"/.test(head)) format = 'pytest-json'
      let doc: unknown
      try {
        doc = JSON.parse(text)
      } catch (error) {
        return { format, cases: [], error: `not valid JSON: ${errorText(error)}` }
      }
      if (isNode(doc) && 'testResults' in doc) {
        format = 'jest-json'
        return { format, cases: parseJestJson(doc) }
      }
      if (isNode(doc) && Array.isArray(doc.tests) && 'summary' in doc) {
        format = 'pytest-json'
        return { format, cases: parsePytestJson(doc) }
      }
      return {
        format: 'unknown',
        cases: [],
        error: 'JSON, but not a Jest/Vitest (--json), pytest-json-report or go test -json report'
      }
    }
  } catch (error) {
    return { format, cases: [], error: errorText(error) }
  }
  return {
    format: 'unknown',
    cases: [],
    error:
      'not a recognized test report (JUnit XML, Jest/Vitest JSON, pytest-json-report, go test -json)'
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
