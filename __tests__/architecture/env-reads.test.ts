// No code after the edge reads the process's environment: the edge files (docs/ARCHITECTURE.md)
// read it once into tables (the event, the runner's and the host's facts, the inputs) and hand
// those down as values.
import * as fs from 'node:fs'
import * as path from 'node:path'
import ts from 'typescript'

const SRC = path.resolve('src')

/** The edge files: the entries and the post step, the only readers of `process.env`. */
const EDGE = ['src/main.ts', 'src/cli.ts', 'src/cli/cleanup.ts', 'src/cleanup-step.ts']

/**
 * Files that still read it, each with what it reads, to move to the host's table
 * (`src/host.ts`). The list may only shrink: a file on it that no longer reads the environment
 * fails the test until it is taken off.
 */
const NOT_YET_MOVED: string[] = [
  'src/workspace/git.ts' // PATH for git
]

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
  })
}

const isProcess = (node: ts.Node): boolean => ts.isIdentifier(node) && node.text === 'process'

/** Lines where `text` reads `process.env` (`process.env`, `process['env']`, `{ env } = process`). */
function envReads(name: string, text: string): number[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true)
  const lines: number[] = []
  const at = (node: ts.Node): void => {
    lines.push(source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1)
  }
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAccessExpression(node) &&
      isProcess(node.expression) &&
      node.name.text === 'env'
    )
      at(node)
    else if (
      ts.isElementAccessExpression(node) &&
      isProcess(node.expression) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      node.argumentExpression.text === 'env'
    )
      at(node)
    else if (
      ts.isVariableDeclaration(node) &&
      node.initializer !== undefined &&
      isProcess(node.initializer) &&
      ts.isObjectBindingPattern(node.name) &&
      node.name.elements.some((e) => ((e.propertyName ?? e.name) as ts.Identifier).text === 'env')
    )
      at(node)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return lines
}

/** `file:line` of every read outside the allowed files. */
function offenders(sources: { name: string; text: string }[], allowed: string[]): string[] {
  return sources
    .filter((s) => !allowed.includes(s.name))
    .flatMap((s) => envReads(s.name, s.text).map((line) => `${s.name}:${line}`))
}

const sources = files(SRC).map((f) => ({
  name: path.relative(process.cwd(), f).split(path.sep).join('/'),
  text: fs.readFileSync(f, 'utf8')
}))

describe('the environment is read only at the edge', () => {
  it('no file outside the edge files reads process.env', () => {
    expect(offenders(sources, [...EDGE, ...NOT_YET_MOVED])).toEqual([])
  })

  it('every file still listed as not yet moved does read it (the list only shrinks)', () => {
    const stale = NOT_YET_MOVED.filter((name) => {
      const s = sources.find((x) => x.name === name)
      return s === undefined || envReads(s.name, s.text).length === 0
    })
    expect(stale).toEqual([])
  })

  it('the edge files are listed in docs/ARCHITECTURE.md', () => {
    const doc = fs.readFileSync('docs/ARCHITECTURE.md', 'utf8')
    expect(EDGE.filter((f) => !doc.includes(`\`${f}\``))).toEqual([])
  })

  it('catches a read planted after the edge, in each form, and not in a comment or string', () => {
    const planted = [
      '// process.env.FOO in a comment',
      "const s = 'process.env.FOO in a string'",
      'const a = process.env.AIRLOCK_LOCK_DIR',
      "const b = process['env']",
      'const { env } = process',
      'export function f(env: NodeJS.ProcessEnv = process.env): string { return env.X ?? "" }'
    ].join('\n')
    const fixture = [
      ...sources,
      { name: 'src/sandbox/planted.ts', text: planted },
      { name: 'src/main.ts', text: 'const edge = process.env.RUNNER_TEMP' }
    ]
    expect(offenders(fixture, [...EDGE, ...NOT_YET_MOVED])).toEqual([
      'src/sandbox/planted.ts:3',
      'src/sandbox/planted.ts:4',
      'src/sandbox/planted.ts:5',
      'src/sandbox/planted.ts:6'
    ])
  })
})
