// The threat review's corpus (fixtures/threat-corpus/): one git diff per case, read with its
// token placeholders (`@@ghp@@`, `@@ghp:0:12@@`, `@@akia@@`) filled by tokens made now, so that no
// token-shaped string is stored in the repository.
import { randomInt } from 'node:crypto'
import * as fs from 'node:fs'
import * as path from 'node:path'
import type { ThreatClass } from '../src/threat-review/review.js'

export const CORPUS_DIR = path.resolve('fixtures/threat-corpus')

export interface CorpusCase {
  id: string
  kind: 'malicious' | 'disguised' | 'ordinary'
  class: ThreatClass | null
  language: string
  what: string
  /** The diff, placeholders filled. */
  patch: string
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
const pick = (alphabet: string, n: number): string =>
  Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('')

/** Every case of the corpus, in corpus.json's order. */
export function loadCorpus(dir = CORPUS_DIR): CorpusCase[] {
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'corpus.json'), 'utf8')) as {
    cases: Omit<CorpusCase, 'patch'>[]
  }
  const tokens: Record<string, string> = {
    ghp: `ghp_${pick(ALNUM, 36)}`,
    akia: `AKIA${pick(UPPER, 16)}`
  }
  return index.cases.map((c) => ({
    ...c,
    patch: fs
      .readFileSync(path.join(dir, `${c.id}.diff`), 'utf8')
      .replace(/@@(\w+)(?::(\d+):(\d*))?@@/g, (_, name: string, a?: string, b?: string) => {
        const t = tokens[name] ?? ''
        return a === undefined ? t : t.slice(Number(a), b === '' ? undefined : Number(b))
      })
  }))
}
