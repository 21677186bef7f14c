import { jest } from '@jest/globals'
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { main } from '../../src/cli.js'
import {
  PREDICATE_TYPE,
  PROVENANCE_FILE,
  STATEMENT_TYPE,
  writeProvenance
} from '../../src/report/provenance.js'
import { readStatement, verifyProvenance } from '../../src/report/provenance-verify.js'
import { writeOutputs } from '../../src/report/output.js'
import { sampleReport } from './sample.js'

const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex')

/** Every kind of evidence file a run writes. */
const EVIDENCE: Record<string, string> = {
  'diff.patch': 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n',
  'task.md': 'Fix the bug.\n',
  'logs/agent.log': 'agent says hi\n',
  'logs/tests.log': 'ok 1\n',
  'logs/baseline.log': 'not ok 1\n',
  'egress.jsonl': '{"host":"api.example.com","allowed":true}\n',
  'transcript.jsonl': '{"model":"m-1"}\n'
}

let root: string
let dir: string

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-prov-'))
  dir = path.join(root, 'out')
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true })
  for (const [f, content] of Object.entries(EVIDENCE)) fs.writeFileSync(path.join(dir, f), content)
  const report = sampleReport()
  report.diff.sha256 = sha(EVIDENCE['diff.patch'])
  await writeOutputs(dir, report)
  await writeProvenance(dir)
})

afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

/** The statement as parsed JSON, for editing in tests. */
interface S {
  _type: string
  subject: { digest: { sha256: string } }[]
  predicate: {
    outcome: string
    repo: { headSha: string }
    files: { path: string; sha256: string }[]
  }
}

const boundFiles = [...Object.keys(EVIDENCE), 'report.json', 'tests.json', 'comment.md'].sort()

describe('provenance.json', () => {
  it('is an in-toto Statement v1 whose subject is the diff', () => {
    const s = readStatement(dir)
    expect(s._type).toBe(STATEMENT_TYPE)
    expect(s.predicateType).toBe(PREDICATE_TYPE)
    expect(s.subject).toEqual([
      { name: 'diff.patch', digest: { sha256: sha(EVIDENCE['diff.patch']) } }
    ])
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'))
    expect(s.predicate).toMatchObject({
      runId: report.runId,
      outcome: report.outcome,
      repo: { baseSha: report.repo.baseSha, headSha: report.repo.headSha },
      image: { id: report.image.id, baseDigests: report.image.baseDigests },
      task: { sha256: report.task.sha256 },
      transcript: { sha256: sha(EVIDENCE['transcript.jsonl']) },
      egress: { ledgerSha256: sha(EVIDENCE['egress.jsonl']) },
      tests: { reportSha256: sha(fs.readFileSync(path.join(dir, 'tests.json'))) }
    })
    expect(s.predicate.files.map((f) => f.path)).toEqual(boundFiles)
    expect(s.predicate.sandbox).toBeDefined()
    expect(s.predicate.policyFile).toHaveProperty('blobSha')
  })

  it('verifies when nothing changed', () => {
    const r = verifyProvenance(dir)
    expect(r.problems).toEqual([])
    expect(r.ok).toBe(true)
    expect(r.matched).toBe(boundFiles.length)
  })

  it.each(boundFiles)('a changed byte in %s is detected, naming the file', (file) => {
    const p = path.join(dir, file)
    const buf = fs.readFileSync(p)
    buf[Math.floor(buf.length / 2)] ^= 0x01
    fs.writeFileSync(p, buf)
    const r = verifyProvenance(dir)
    expect(r.ok).toBe(false)
    expect(r.problems).toEqual([expect.stringMatching(new RegExp(`^${file}: changed`))])
  })

  it.each(boundFiles)('%s removed is detected', (file) => {
    fs.rmSync(path.join(dir, file))
    const r = verifyProvenance(dir)
    expect(r.ok).toBe(false)
    expect(r.problems).toContain(`${file}: missing`)
  })

  it("a dry run's record of the writes it would make, written after the statement, keeps the folder verifiable", () => {
    fs.writeFileSync(
      path.join(dir, 'dry-run.json'),
      '{"mode":"publish","dryRun":true,"writes":[]}\n'
    )
    expect(verifyProvenance(dir)).toMatchObject({ ok: true, problems: [] })
    // Only at the top of the folder, under its own name.
    fs.writeFileSync(path.join(dir, 'logs', 'dry-run.json'), '{}')
    expect(verifyProvenance(dir).problems).toEqual(['logs/dry-run.json: not in the statement'])
  })

  it('a file added to the folder is detected', () => {
    fs.writeFileSync(path.join(dir, 'logs', 'extra.log'), 'x')
    expect(verifyProvenance(dir).problems).toEqual(['logs/extra.log: not in the statement'])
  })

  it('a bound file replaced by a symlink to the same bytes is detected', () => {
    fs.writeFileSync(path.join(root, 'copy'), EVIDENCE['task.md'])
    fs.rmSync(path.join(dir, 'task.md'))
    fs.symlinkSync(path.join(root, 'copy'), path.join(dir, 'task.md'))
    const r = verifyProvenance(dir)
    expect(r.ok).toBe(false)
    expect(r.problems).toEqual(
      expect.arrayContaining(['task.md: not a regular file (symlink or special file)'])
    )
  })

  it.each([
    ['the outcome', (s: S) => (s.predicate.outcome = 'success-ish')],
    ['the head SHA', (s: S) => (s.predicate.repo.headSha = 'f'.repeat(40))],
    ['the subject', (s: S) => (s.subject[0].digest.sha256 = 'a'.repeat(64))],
    ['a file digest', (s: S) => (s.predicate.files[0].sha256 = 'b'.repeat(64))],
    ['a path that climbs out', (s: S) => (s.predicate.files[0].path = '../x')],
    ['the type', (s: S) => (s._type = 'https://in-toto.io/Statement/v0.1')]
  ])('a statement with %s edited does not verify', (_what, edit) => {
    const p = path.join(dir, PROVENANCE_FILE)
    const s = JSON.parse(fs.readFileSync(p, 'utf8'))
    edit(s)
    fs.writeFileSync(p, JSON.stringify(s))
    expect(verifyProvenance(dir).ok).toBe(false)
  })

  it('a missing or non-JSON statement does not verify', () => {
    fs.writeFileSync(path.join(dir, PROVENANCE_FILE), '{not json')
    expect(verifyProvenance(dir).ok).toBe(false)
    fs.rmSync(path.join(dir, PROVENANCE_FILE))
    expect(verifyProvenance(dir).problems[0]).toMatch(/^provenance\.json: /)
  })
})

describe('airlock verify', () => {
  let out: ReturnType<typeof jest.spyOn>
  let err: ReturnType<typeof jest.spyOn>
  beforeEach(() => {
    out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true)
    err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true)
  })
  afterEach(() => {
    out.mockRestore()
    err.mockRestore()
  })

  it('exits 0 when every file matches, 1 on a changed byte, 2 when DIR is not a folder', async () => {
    expect(await main(['verify', dir])).toBe(0)
    fs.appendFileSync(path.join(dir, 'logs', 'agent.log'), 'x')
    expect(await main(['verify', dir])).toBe(1)
    expect(out.mock.calls.map((c: unknown[]) => String(c[0])).join('')).toMatch(
      /logs\/agent\.log: changed/
    )
    await expect(main(['verify', path.join(dir, 'report.json')])).rejects.toMatchObject({
      input: 'DIR'
    })
  })
})
