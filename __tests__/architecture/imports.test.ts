// The import graph of src/: no cycle, dockerode only behind the runtime boundary, and no import
// that runs against the flow (inputs → plan → sandbox → evidence → report → publishers).
import * as fs from 'node:fs'
import * as path from 'node:path'
import ts from 'typescript'

const SRC = path.resolve('src')

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** Module specifiers of every import/export-from (type-only ones too) and dynamic import. */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const out: string[] = []
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      out.push(node.moduleSpecifier.text)
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      out.push(node.arguments[0].text)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

const rel = (f: string): string => path.relative(SRC, f).split(path.sep).join('/')

/** The stage a file of src/ belongs to (folder, or file name for the top-level modules). */
export function stageOf(file: string): string {
  const r = rel(file)
  if (r.startsWith('sandbox/')) return 'sandbox'
  if (r.startsWith('workspace/')) return 'workspace'
  if (r.startsWith('egress/')) return 'egress'
  if (r.startsWith('evidence/')) return 'evidence'
  if (r.startsWith('report/')) return 'report'
  if (r.startsWith('github/')) return 'github'
  if (r.startsWith('pipeline')) return 'pipeline'
  if (r.startsWith('setup/')) return 'setup'
  if (r.startsWith('services/')) return 'services'
  if (r.startsWith('isolation/')) return 'isolation'
  if (r.startsWith('cache/')) return 'cache'
  if (r.startsWith('inputs') || r.startsWith('policy') || r.startsWith('presets/')) return 'inputs'
  if (r.startsWith('plan')) return 'plan'
  if (/^(index|post|cli|main|bin)\.ts$/.test(r) || r.startsWith('cli/')) return 'entries'
  return 'base'
}

const FORBIDDEN: Record<string, string[]> = {
  evidence: ['sandbox', 'egress', 'report', 'github', 'pipeline', 'entries'],
  sandbox: ['evidence', 'report', 'github', 'egress', 'inputs', 'pipeline', 'entries'],
  report: ['github', 'sandbox', 'pipeline', 'entries'],
  egress: ['report', 'github', 'pipeline', 'entries'],
  plan: ['sandbox', 'evidence', 'report', 'github', 'pipeline', 'entries'],
  inputs: ['evidence', 'report', 'github', 'sandbox', 'pipeline', 'entries'],
  workspace: ['inputs', 'evidence', 'report', 'github', 'pipeline', 'entries'],
  github: ['inputs', 'pipeline', 'entries'],
  pipeline: ['entries'],
  // The install phase: runs a phase through the egress proxy and reads the evidence of its result.
  setup: ['github', 'pipeline', 'entries'],
  cache: ['evidence', 'egress', 'github', 'pipeline', 'entries'],
  // Service containers: sidecars of the runtime, nothing after them in the flow.
  services: ['evidence', 'report', 'github', 'egress', 'inputs', 'pipeline', 'entries'],
  // The isolation model: pure, read by the inputs and the pipeline.
  isolation: [
    'sandbox',
    'workspace',
    'evidence',
    'egress',
    'report',
    'github',
    'pipeline',
    'entries'
  ],
  base: [
    'inputs',
    'plan',
    'sandbox',
    'workspace',
    'egress',
    'evidence',
    'report',
    'github',
    'pipeline',
    'entries'
  ]
}

interface Graph {
  edges: Map<string, string[]>
  external: Map<string, string[]>
}

function graph(): Graph {
  const edges = new Map<string, string[]>()
  const external = new Map<string, string[]>()
  for (const f of files(SRC)) {
    const local: string[] = []
    const ext: string[] = []
    for (const s of specifiers(f)) {
      if (s.startsWith('.')) local.push(path.resolve(path.dirname(f), s).replace(/\.js$/, '.ts'))
      else ext.push(s)
    }
    edges.set(f, local)
    external.set(f, ext)
  }
  return { edges, external }
}

export function cycles(edges: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (n: string): void => {
    state.set(n, 'open')
    stack.push(n)
    for (const m of edges.get(n) ?? []) {
      if (state.get(m) === 'open') found.push([...stack.slice(stack.indexOf(m)), m].map(rel))
      else if (!state.has(m)) visit(m)
    }
    stack.pop()
    state.set(n, 'done')
  }
  for (const n of edges.keys()) if (!state.has(n)) visit(n)
  return found
}

describe('import graph of src/', () => {
  const g = graph()

  test('every relative import resolves to a file of src/', () => {
    const missing = [...g.edges].flatMap(([f, to]) =>
      to.filter((t) => !fs.existsSync(t)).map((t) => `${rel(f)} → ${rel(t)}`)
    )
    expect(missing).toEqual([])
  })

  test('has no cycle', () => {
    expect(cycles(g.edges)).toEqual([])
  })

  test('dockerode is imported only under src/sandbox/', () => {
    const outside = [...g.external]
      .filter(([f, ext]) => ext.includes('dockerode') && !rel(f).startsWith('sandbox/'))
      .map(([f]) => rel(f))
    expect(outside).toEqual([])
  })

  test('no import runs against the flow', () => {
    const against = [...g.edges].flatMap(([f, to]) => {
      const from = stageOf(f)
      return to
        .filter((t) => (FORBIDDEN[from] ?? []).includes(stageOf(t)))
        .map((t) => `${rel(f)} (${from}) → ${rel(t)} (${stageOf(t)})`)
    })
    expect(against).toEqual([])
  })

  test('the checks can fail: a made-up cycle and stage are caught', () => {
    const a = path.join(SRC, 'a.ts')
    const b = path.join(SRC, 'b.ts')
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [a]]
        ])
      )
    ).toEqual([['a.ts', 'b.ts', 'a.ts']])
    expect(stageOf(path.join(SRC, 'evidence/x.ts'))).toBe('evidence')
    expect(stageOf(path.join(SRC, 'cli/args.ts'))).toBe('entries')
    expect(FORBIDDEN.evidence).toContain(stageOf(path.join(SRC, 'report/report.ts')))
  })
})
