// Secret scanning of what the agent produced and of every text that leaves the run. The rules
// (secret-rules.ts) are secretlint's recommended preset (maintained, pure JavaScript, exact match
// ranges: GitHub, AWS, Anthropic, OpenAI, Slack, private keys, npm, GCP, ...) plus a JWT rule of
// our own. The comment-based switches (`secretlint-disable`) are not loaded: the text scanned is
// the agent's, and it must not be able to silence the scanner.
//
// Each finding's value joins the run's Redactor, which then masks it everywhere in every form it
// knows (raw, base64, URL-encoded, JSON-escaped, hex, split across lines). Text is also scanned
// decoded (URL, JSON escapes, base64 runs), so a token written in one of those forms is found too.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { lintSource } from '@secretlint/core'
import type {
  SecretLintRuleContext,
  SecretLintRuleCreator,
  SecretLintSourceCode
} from '@secretlint/types'
import { Redactor } from '../redact.js'
import { CONFIG } from './secret-rules.js'

export interface SecretFinding {
  /** secretlint's rule id without its scope, e.g. `secretlint-rule-github`. */
  rule: string
  /** The file of the diff it was found in (null outside the diff). */
  file: string | null
  /** The secret as found (decoded when it was found in an encoded form). Never written out. */
  value: string
}

export interface PolicyViolation {
  rule: string
  path: string | null
  detail: string
}

const B64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g

/**
 * The text and its decoded views: URL-decoded, JSON-unescaped and the decoded base64 runs, so a
 * token in one of those encodings is found as itself.
 */
export function decodedViews(text: string): string[] {
  const views = [text]
  if (/%[0-9A-Fa-f]{2}/.test(text)) {
    views.push(
      text.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    )
  }
  if (text.includes('\\')) {
    views.push(
      text
        .replace(/\\u([0-9A-Fa-f]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
        .replace(/\\n/g, '\n')
        .replace(/\\r/g, '\r')
        .replace(/\\t/g, '\t')
        .replace(/\\([\\/"])/g, '$1')
    )
  }
  const decoded: string[] = []
  for (const m of text.matchAll(B64_RUN)) {
    const plain = Buffer.from(m[0].replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString(
      'latin1'
    )
    // Only runs that decode to mostly printable text can hold a token.
    const printable = plain.replace(/[^\x20-\x7e\r\n\t]/g, '').length
    if (plain.length >= 16 && printable / plain.length > 0.9) decoded.push(plain)
  }
  if (decoded.length > 0) views.push(decoded.join('\n'))
  return views
}

/** Every secretlint finding in `text`, in any of its decoded views. */
export async function scanText(text: string, file: string | null = null): Promise<SecretFinding[]> {
  const out: SecretFinding[] = []
  const seen = new Set<string>()
  for (const view of decodedViews(text)) {
    const result = await lintSource({
      source: { filePath: file ?? 'text', content: view, contentType: 'text' },
      options: { config: CONFIG, noPhysicFilePath: true }
    })
    for (const m of result.messages) {
      if (m.type !== 'message') continue
      const value = view.slice(m.range[0], m.range[1])
      const key = `${m.ruleId}\0${value}`
      if (value.length === 0 || seen.has(key)) continue
      seen.add(key)
      out.push({ rule: m.ruleId.replace(/^@secretlint\//, ''), file, value })
    }
  }
  return out
}

/**
 * The same rules, run synchronously on one line of streamed output (the live job log, where
 * nothing can wait): each rule's `file` handler over the line and its decoded views. A rule whose
 * handler is asynchronous or fails adds nothing here; the files are scanned in full afterwards.
 */
export function scanLineSync(text: string): string[] {
  const found = new Set<string>()
  for (const view of decodedViews(text)) {
    const source: SecretLintSourceCode = {
      hasBOM: false,
      content: view,
      filePath: undefined,
      physicalFilePath: undefined,
      contentType: 'text',
      ext: '',
      getFilePath: () => undefined,
      getPhysicalFilePath: () => undefined,
      locationToRange: () => [0, 0],
      rangeToLocation: (r) => ({
        start: { line: 1, column: r[0] },
        end: { line: 1, column: r[1] }
      }),
      positionToIndex: (p) => p.column,
      indexToPosition: (i) => ({ line: 1, column: i })
    }
    for (const descriptor of CONFIG.rules) {
      const rule = descriptor.rule as SecretLintRuleCreator
      const context: SecretLintRuleContext = {
        sharedOptions: {},
        createTranslator: () => (messageId) => ({
          message: String(messageId),
          messageId: String(messageId),
          data: {}
        }),
        report: (d) => {
          const value = view.slice(d.range[0], d.range[1])
          if (value !== '') found.add(value)
        },
        ignore: () => undefined
      }
      try {
        const handler = rule.create(context, descriptor.options ?? {})
        const pending = handler.file?.(source)
        if (pending instanceof Promise) pending.catch(() => undefined)
      } catch {
        // A rule that cannot run on a line: the file scan afterwards still runs it.
      }
    }
  }
  return [...found]
}

/**
 * Masks one line of live output: known values, and token shapes found in it (which then join the
 * redactor, so they are masked in every later output too).
 */
export function maskLine(redactor: Redactor, line: string): string {
  const found = scanLineSync(line)
  if (found.length > 0) redactor.add(found)
  return redactor.redact(line)
}

/** The file each section of a git patch belongs to, with the lines the change adds. */
export function patchSections(patch: string): { file: string; added: string }[] {
  const out: { file: string; added: string }[] = []
  let current: { file: string; lines: string[] } | undefined
  for (const line of patch.split('\n')) {
    const header = /^diff --git (?:"?a\/.*?"?) "?b\/(.*?)"?$/.exec(line)
    if (header) {
      if (current) out.push({ file: current.file, added: current.lines.join('\n') })
      current = { file: header[1], lines: [] }
    } else if (current && line.startsWith('+') && !line.startsWith('+++ ')) {
      current.lines.push(line.slice(1))
    }
  }
  if (current) out.push({ file: current.file, added: current.lines.join('\n') })
  return out
}

/**
 * Scans what the change adds for token shapes and for the run's known secret values. Found values
 * join `redactor`; the patch comes back masked, with one `secret-in-diff` violation per file and
 * rule (the value itself never in it).
 */
export async function scanDiff(
  patch: Buffer,
  redactor: Redactor
): Promise<{ patch: Buffer; violations: PolicyViolation[]; findings: SecretFinding[] }> {
  const text = patch.toString('latin1')
  const sections = patchSections(text)
  const findings: SecretFinding[] = []
  for (const s of sections) findings.push(...(await scanText(s.added, s.file)))
  redactor.add(findings.map((f) => f.value))
  const violations: PolicyViolation[] = []
  const seen = new Set<string>()
  const push = (rule: string, file: string, detail: string): void => {
    const key = `${rule}\0${file}`
    if (seen.has(key)) return
    seen.add(key)
    violations.push({ rule: 'secret-in-diff', path: file, detail })
  }
  for (const f of findings) {
    push(
      f.rule,
      f.file ?? '',
      `${f.rule}: a token of this shape is in the change (the value is masked everywhere)`
    )
  }
  // Values the run knows (credentials, env values): their presence in a file names that file.
  const known = redactor.values.filter((v) => !findings.some((f) => f.value === v))
  if (known.length > 0) {
    const probe = new Redactor(known, true)
    for (const s of sections) {
      if (probe.matches(s.added).length > 0) {
        push(
          'known-value',
          s.file,
          'the change contains the value of a secret the run holds (a credential or an env value); it is masked in diff.patch'
        )
      }
    }
  }
  const bytes = new Redactor(redactor.values, true)
  const masked = bytes.empty ? patch : Buffer.from(bytes.redact(text), 'latin1')
  return { patch: masked, violations, findings }
}

/**
 * Before the outputs are written: scans the logs and the report's text for token shapes, adds
 * what it finds to `redactor` (so report.json, tests.json, comment.md and the summary mask them),
 * and rewrites the logs masked.
 */
export async function scanOutputs(
  out: string,
  texts: string[],
  logFiles: string[],
  redactor: Redactor
): Promise<SecretFinding[]> {
  const findings: SecretFinding[] = []
  for (const t of texts) findings.push(...(await scanText(t)))
  const logs: { file: string; text: string }[] = []
  for (const rel of logFiles) {
    const file = path.join(out, rel)
    const text = await fs.promises.readFile(file, 'latin1').catch(() => undefined)
    if (text === undefined) continue
    logs.push({ file, text })
    findings.push(...(await scanText(text)))
  }
  redactor.add(findings.map((f) => f.value))
  if (findings.length > 0) {
    const bytes = new Redactor(redactor.values, true)
    for (const l of logs) {
      const masked = bytes.redact(l.text)
      if (masked !== l.text) await fs.promises.writeFile(l.file, Buffer.from(masked, 'latin1'))
    }
  }
  return findings
}

/** The values to mask in a run: env values, extra secrets, and every credential the proxy injects. */
export function runSecretValues(secrets: {
  env: { value: string }[]
  secrets?: string[]
  egress?: { credentials: Record<string, string> }
}): string[] {
  return [
    ...secrets.env.map((e) => e.value),
    ...(secrets.secrets ?? []),
    ...Object.values(secrets.egress?.credentials ?? {})
  ]
}
