// The threat review against its corpus (fixtures/threat-corpus/): every plain malicious change is
// caught with a finding of its class, and fewer than 10% of the ordinary changes are flagged.
// The disguised cases' rates are for docs/BENCHMARKS.md (bench/threat-review.ts), not asserted.
import { loadCorpus } from '../../__fixtures__/threat-corpus.js'
import { THREAT_CLASSES, reviewPatch } from '../../src/threat-review/review.js'

const corpus = loadCorpus()
const review = (patch: string) => reviewPatch(patch, { diffSha256: null, secrets: 'scan' })

describe('the corpus', () => {
  it('holds at least 40 diffs, every class in plain and disguised form, and ordinary changes', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40)
    for (const c of THREAT_CLASSES) {
      expect(corpus.filter((x) => x.kind === 'malicious' && x.class === c).length).toBeGreaterThan(
        2
      )
      expect(corpus.filter((x) => x.kind === 'disguised' && x.class === c).length).toBeGreaterThan(
        2
      )
    }
    for (const lang of ['javascript', 'python', 'go', 'shell'])
      expect(
        corpus.filter((x) => x.kind === 'malicious' && x.language === lang).length
      ).toBeGreaterThan(4)
    expect(corpus.filter((x) => x.kind === 'ordinary').length).toBeGreaterThanOrEqual(20)
    // The loader filled every token placeholder.
    for (const c of corpus) expect(c.patch).not.toMatch(/@@\w+(:\d+:\d*)?@@/)
  })
})

describe('every plain malicious change is caught, with a finding of its class', () => {
  it.each(corpus.filter((c) => c.kind === 'malicious').map((c) => [c.id, c] as const))(
    '%s',
    async (_, c) => {
      const r = await review(c.patch)
      expect(r.verdict).not.toBe('clean')
      const mine = r.findings.filter((f) => f.class === c.class)
      expect(mine.length).toBeGreaterThan(0)
      // Every finding names a file of the change and a line in it (or the file as a whole).
      for (const f of r.findings) {
        expect(c.patch).toContain(`b/${f.path}`)
        if (f.line !== null) expect(f.line).toBeGreaterThan(0)
        expect(f.why).not.toBe('')
      }
    }
  )
})

describe('ordinary changes', () => {
  it('fewer than 10% are flagged', async () => {
    const ordinary = corpus.filter((c) => c.kind === 'ordinary')
    const flagged: string[] = []
    for (const c of ordinary) if ((await review(c.patch)).verdict !== 'clean') flagged.push(c.id)
    expect(flagged.length / ordinary.length).toBeLessThan(0.1)
  })

  it('a dependency bump, a refactor, a test added and docs with links pass clean', async () => {
    for (const id of [
      'ord-js-bump',
      'ord-go-refactor',
      'ord-py-test',
      'ord-readme',
      'ord-go-bump'
    ]) {
      const c = corpus.find((x) => x.id === id)
      if (c === undefined) throw new Error(`no case ${id}`)
      const r = await review(c.patch)
      expect({ id, verdict: r.verdict, findings: r.findings }).toEqual({
        id,
        verdict: 'clean',
        findings: []
      })
    }
  })
})

describe('credentials are named, never quoted', () => {
  it('no finding carries a token the change holds', async () => {
    for (const c of corpus.filter((x) => x.class === 'credential')) {
      const r = await review(c.patch)
      const text = JSON.stringify(r)
      for (const m of c.patch.matchAll(/(ghp_[A-Za-z0-9]{36}|AKIA[A-Z2-7]{16})/g))
        expect(text).not.toContain(m[1])
    }
  })
})
