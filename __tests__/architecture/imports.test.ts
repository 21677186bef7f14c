// The import graph of src/: no cycle, dockerode only behind the runtime boundary, and no import
// that crosses a rule of the layout (__tests__/architecture/layout.json: the parts of the flow,
// edge → plan → runtime stages → evidence → report → publishers, and what must never import what).
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

interface Layout {
  parts: Record<string, { paths: string[]; says: string }>
  never: { from: string; to: string; why: string }[]
}

/** The stages and the imports that must never exist between them (the picture in the docs). */
export const LAYOUT = JSON.parse(
  fs.readFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'layout.json'), 'utf8')
) as Layout

/** The part of the layout a file of src/ belongs to (undefined: none). */
export function stageOf(file: string): string | undefined {
  const r = `src/${rel(file)}`
  for (const [name, part] of Object.entries(LAYOUT.parts))
    if (part.paths.some((p) => (p.endsWith('/') ? r.startsWith(p) : r === p))) return name
  return undefined
}

/** The imports of `edges` that cross a "never" of the layout, or leave the base (below all). */
export function brokenRules(edges: Map<string, string[]>): string[] {
  return [...edges].flatMap(([f, to]) => {
    const from = stageOf(f)
    return to.flatMap((t) => {
      const into = stageOf(t)
      if (from === undefined || into === undefined || from === into) return []
      const rule = LAYOUT.never.find((n) => n.from === from && n.to === into)
      if (rule) return [`${rel(f)} (${from}) → ${rel(t)} (${into}): ${rule.why}`]
      if (from === 'base')
        return [`${rel(f)} (base) → ${rel(t)} (${into}): the base is below every stage`]
      return []
    })
  })
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

  test('every file of src/ is in one part of the layout', () => {
    expect([...g.edges.keys()].filter((f) => stageOf(f) === undefined).map(rel)).toEqual([])
  })

  test('no import crosses a rule of the layout', () => {
    expect(brokenRules(g.edges)).toEqual([])
  })

  test('the checks can fail: a made-up cycle and a made-up broken rule are caught', () => {
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
    expect(stageOf(path.join(SRC, 'nowhere.ts'))).toBeUndefined()
    const setup = path.join(SRC, 'setup/setup.ts')
    expect(brokenRules(new Map([[setup, [path.join(SRC, 'evidence/diff.ts')]]]))).toEqual([
      'setup/setup.ts (capabilities) → evidence/diff.ts (evidence): a run-time stage never reaches the evidence stage'
    ])
    expect(
      brokenRules(new Map([[path.join(SRC, 'errors.ts'), [path.join(SRC, 'plan.ts')]]]))
    ).toHaveLength(1)
  })
})
