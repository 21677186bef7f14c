// The deterministic threat rules: what each added (or removed) line of a change is checked for,
// by class. Every rule is a plain pattern over the line as written and over the line with its
// string splits joined ("ht" + "tp" → "http"), so a finding names the exact line and says why.
// Pure: no model, no network, no file read. Each class's rules are in a file of their own
// (endpoint-rules.ts, process-rules.ts, blob-rules.ts, install-hooks.ts, dependencies.ts,
// credential-rules.ts, test-weakening-rules.ts, ci-agent-files.ts); this file runs them over
// one file of the patch and combines signals that are ordinary alone.
import { hasHidden } from '../text-filter.js'
import { isSourcePath } from '../evidence/diff.js'
import { BLOB_LINE_RULES, splitBlobs } from './blob-rules.js'
import { ciAndAgentFiles } from './ci-agent-files.js'
import { CREDENTIAL_LINE_RULES, CREDENTIAL_READ, WHOLE_ENV } from './credential-rules.js'
import { dependencies } from './dependencies.js'
import { ENDPOINT_LINE_RULES, NETWORK_CALL, endpoints } from './endpoint-rules.js'
import { CODE, LOCKFILE, isDocPath } from './file-kinds.js'
import { cut } from './finding.js'
import type { LineRule, ThreatClass, ThreatFinding } from './finding.js'
import { installHooks } from './install-hooks.js'
import { MAX_LINE, isComment, joined } from './line-reading.js'
import type { PatchFile } from './patch.js'
import { PROCESS_LINE_RULES } from './process-rules.js'
import { TEST_LINE_RULES, testChanges } from './test-weakening-rules.js'

export { THREAT_CLASSES } from './finding.js'
export type { ThreatClass, ThreatFinding, ThreatSeverity } from './finding.js'
export { joined } from './line-reading.js'

/** Every line rule, by class; within a class the strongest first. */
const LINE_RULES: LineRule[] = [
  ...ENDPOINT_LINE_RULES,
  ...PROCESS_LINE_RULES,
  ...BLOB_LINE_RULES,
  ...CREDENTIAL_LINE_RULES,
  ...TEST_LINE_RULES
]

/** Every finding of one file of the patch. */
export function fileFindings(f: PatchFile): ThreatFinding[] {
  const out: ThreatFinding[] = []
  ciAndAgentFiles(f, out)
  testChanges(f, out)
  if (f.binary) {
    if (
      f.status !== 'deleted' &&
      /\.(exe|dll|so|dylib|node|bin|jar|class|pyc|pyo|wasm|o|a)$/i.test(f.path)
    )
      out.push({
        path: f.path,
        line: null,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'binary-code',
        severity: 'medium',
        why: 'compiled code or a library is added as a binary: what it does cannot be read'
      })
    return out
  }
  installHooks(f, out)
  dependencies(f, out)
  const lock = LOCKFILE.test(f.path)
  const doc = isDocPath(f.path)
  const code =
    CODE.test(f.path) ||
    isSourcePath(f.path) ||
    !/\.\w+$/.test(f.path.slice(f.path.lastIndexOf('/') + 1))
  if (lock || doc || !code) return out
  if (/\.min\.(js|css)$/.test(f.path) && f.status === 'added')
    out.push({
      path: f.path,
      line: f.added[0]?.line ?? null,
      side: 'RIGHT',
      class: 'encoded-blob',
      rule: 'minified-file',
      severity: 'medium',
      why: 'a minified file is added: its code cannot be reviewed as written'
    })
  const rules = LINE_RULES.filter((r) => r.files === undefined || r.files(f.path))
  for (const l of f.added) {
    const raw = l.text.length > MAX_LINE ? l.text.slice(0, MAX_LINE) : l.text
    // Only a line with a character outside printable ASCII can hold a hidden one.
    if (/[^\t\x20-\x7e]/.test(raw) && hasHidden(raw)) {
      out.push({
        path: f.path,
        line: l.line,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'hidden-characters',
        severity: 'medium',
        why: 'invisible or bidi characters: the line may not run the way it reads'
      })
    }
    if (
      l.text.length >= 500 &&
      /\.([cm]?[jt]sx?|py|go|sh|rb|php|pl)$/.test(f.path) &&
      (l.text.match(/\s/g)?.length ?? 0) / l.text.length < 0.08
    ) {
      out.push({
        path: f.path,
        line: l.line,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'minified-line',
        severity: 'medium',
        why: `a ${l.text.length}-character line with almost no spaces: packed or minified code in a source file`
      })
    }
    const comment = isComment(raw)
    const j = joined(raw)
    if (!comment) endpoints(f, l, j, out)
    // One finding per class and line: the strongest rule of the class (listed strongest first).
    const done = new Set<ThreatClass>()
    for (const r of rules) {
      if (done.has(r.class)) continue
      if (comment && !r.comments && r.class !== 'encoded-blob') continue
      const hit = (m: RegExpExecArray | null): boolean => m !== null && (r.accept?.(m) ?? true)
      if (!(hit(r.re.exec(raw)) || (j !== raw && hit(r.re.exec(j))))) continue
      done.add(r.class)
      out.push({
        path: f.path,
        line: l.line,
        side: 'RIGHT',
        class: r.class,
        rule: r.rule,
        severity: r.severity,
        why: r.why,
        ...(r.class === 'credential' ? {} : { match: cut(raw.trim()) })
      })
    }
  }
  splitBlobs(f, out)
  combine(f, out)
  return out
}

/**
 * Signals that are ordinary alone and are not together, in one file: decoded text that is run, a
 * network request that carries credentials or the environment.
 */
function combine(f: PatchFile, out: ThreatFinding[]): void {
  const mine = out.filter((x) => x.path === f.path)
  const has = (c: ThreatClass, rules?: string[]): ThreatFinding | undefined =>
    mine.find((x) => x.class === c && (rules === undefined || rules.includes(x.rule)))
  const blob = has('encoded-blob', [
    'base64-blob',
    'hex-blob',
    'escape-run',
    'char-codes',
    'split-blob'
  ])
  const run = has('process-execution')
  if (blob && run && !mine.some((x) => x.rule === 'decode-and-run'))
    out.push({
      path: f.path,
      line: run.line,
      side: 'RIGHT',
      class: 'process-execution',
      rule: 'decode-and-run',
      severity: 'high',
      why: `runs code in a file that also adds encoded content (line ${blob.line ?? '?'}): hidden code may be what runs`,
      ...(run.match !== undefined ? { match: run.match } : {})
    })
  // A request, a socket or an endpoint, and credentials or the environment read, in one file.
  const live = f.added.filter((l) => !isComment(l.text))
  const net =
    has('outbound-endpoint') ??
    live.find((l) => NETWORK_CALL.test(l.text) || NETWORK_CALL.test(joined(l.text)))
  const creds = has('credential') ?? live.find((l) => CREDENTIAL_READ.test(joined(l.text)))
  if (net && creds && !mine.some((x) => x.rule === 'exfiltration')) {
    const netLine = 'class' in net ? net.line : net.line
    const match = 'class' in net ? net.match : cut(net.text.trim())
    const credText = f.added.find((l) => l.line === creds.line)?.text ?? ''
    // A named endpoint, or the whole environment / a credential file: rarely an ordinary client.
    const strong = 'class' in net || WHOLE_ENV.test(joined(credText))
    out.push({
      path: f.path,
      line: netLine,
      side: 'RIGHT',
      class: 'outbound-endpoint',
      rule: 'exfiltration',
      severity: strong ? 'high' : 'medium',
      why: `sends data out in a file that also reads ${strong ? 'credentials or the whole environment' : 'a secret-named variable'} (line ${creds.line ?? '?'})`,
      ...(match !== undefined ? { match } : {})
    })
  }
}
