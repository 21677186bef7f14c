// The dependency tree an install resolved, read from what it left in the workspace (npm's hidden
// lockfile, Python's installed distributions): hashed and listed; the files are hostile input.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { MAX_PYTHON_TREES, readResolvedTrees } from '../../src/evidence/resolved.js'

let root: string
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-resolved-'))
})
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex')

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

const HIDDEN = JSON.stringify({
  name: 'demo',
  lockfileVersion: 3,
  requires: true,
  packages: {
    'node_modules/left-pad': { version: '1.0.0', resolved: 'http://r/left-pad-1.0.0.tgz' },
    'node_modules/@scope/a': { version: '2.1.0' },
    'node_modules/@scope/a/node_modules/left-pad': { version: '0.9.0' },
    'node_modules/linked': { link: true, resolved: 'packages/linked' }
  }
})

describe('readResolvedTrees', () => {
  test('nothing installed: no tree', async () => {
    write('src/app.py', 'x = 1\n')
    expect(await readResolvedTrees(root)).toEqual({ trees: [] })
  })

  test("npm's hidden lockfile: its bytes hashed, every resolved package listed", async () => {
    write('node_modules/.package-lock.json', HIDDEN)
    expect(await readResolvedTrees(root)).toEqual({
      trees: [
        {
          kind: 'npm',
          path: 'node_modules/.package-lock.json',
          sha256: sha(HIDDEN),
          total: 4,
          packages: ['@scope/a@2.1.0', 'left-pad@0.9.0', 'left-pad@1.0.0', 'linked@link']
        }
      ]
    })
  })

  test('Python distributions in a virtualenv and a --target folder: the freeze listing hashed', async () => {
    const site = '.venv/lib/python3.11/site-packages'
    write(`${site}/pytest-8.3.2.dist-info/METADATA`, 'Name: pytest\n')
    write(`${site}/iniconfig-2.0.0.dist-info/METADATA`, 'Name: iniconfig\n')
    write(`${site}/pytest/__init__.py`, '')
    write('deps/requests-2.32.3.dist-info/METADATA', 'Name: requests\n')
    const r = await readResolvedTrees(root)
    expect(r.trees).toEqual([
      {
        kind: 'python',
        path: site,
        sha256: sha('iniconfig==2.0.0\npytest==8.3.2\n'),
        total: 2,
        packages: ['iniconfig==2.0.0', 'pytest==8.3.2']
      },
      {
        kind: 'python',
        path: 'deps',
        sha256: sha('requests==2.32.3\n'),
        total: 1,
        packages: ['requests==2.32.3']
      }
    ])
  })

  test('long listings are capped, the count and the hash cover all of it', async () => {
    const packages: Record<string, { version: string }> = {}
    for (let i = 0; i < 450; i++)
      packages[`node_modules/p${String(i).padStart(3, '0')}`] = { version: '1.0.0' }
    const text = JSON.stringify({ packages })
    write('node_modules/.package-lock.json', text)
    const [tree] = (await readResolvedTrees(root)).trees
    expect(tree).toMatchObject({ total: 450, sha256: sha(text) })
    expect(tree.packages).toHaveLength(200)
    expect(tree.packages[0]).toBe('p000@1.0.0')
  })

  describe('hostile install output', () => {
    test('a symlinked hidden lockfile or node_modules is not followed', async () => {
      write('elsewhere/.package-lock.json', HIDDEN)
      fs.mkdirSync(path.join(root, 'node_modules'))
      fs.symlinkSync(
        path.join(root, 'elsewhere/.package-lock.json'),
        path.join(root, 'node_modules/.package-lock.json')
      )
      expect((await readResolvedTrees(root)).trees).toEqual([
        expect.objectContaining({
          kind: 'npm',
          sha256: null,
          total: 0,
          packages: [],
          note: expect.stringMatching(/symlink/)
        })
      ])
      fs.rmSync(path.join(root, 'node_modules'), { recursive: true })
      fs.symlinkSync(path.join(root, 'elsewhere'), path.join(root, 'node_modules'))
      expect((await readResolvedTrees(root)).trees[0]).toMatchObject({
        sha256: null,
        note: expect.stringMatching(/symlink/)
      })
    })

    test('a FIFO in its place does not block; an oversized or malformed file is recorded as such', async () => {
      fs.mkdirSync(path.join(root, 'node_modules'))
      execFileSync('mkfifo', [path.join(root, 'node_modules/.package-lock.json')])
      expect((await readResolvedTrees(root)).trees[0]).toMatchObject({
        sha256: null,
        note: expect.stringMatching(/not a regular file/)
      })
      fs.rmSync(path.join(root, 'node_modules/.package-lock.json'))
      write('node_modules/.package-lock.json', '{"packages": [1, 2')
      expect((await readResolvedTrees(root)).trees[0]).toMatchObject({
        sha256: sha('{"packages": [1, 2'),
        total: 0,
        note: 'not valid JSON: packages not listed'
      })
      const big = Buffer.alloc(33 * 1024 * 1024, 0x20)
      fs.writeFileSync(path.join(root, 'node_modules/.package-lock.json'), big)
      expect((await readResolvedTrees(root)).trees[0]).toMatchObject({
        sha256: null,
        note: 'larger than 32 MiB'
      })
    })

    test('names with control characters or odd shapes are not listed (counted in the note); symlinked site folders are not entered', async () => {
      write(
        'node_modules/.package-lock.json',
        JSON.stringify({
          packages: {
            'node_modules/ok': { version: '1.0.0' },
            'node_modules/evil\u202ename': { version: '1.0.0' },
            'node_modules/x': { version: '1.0.0\n# injected' },
            'node_modules/y': { version: { not: 'a string' } }
          }
        })
      )
      write('.venv/site/ok-1.0.dist-info/METADATA', '')
      write('.venv/site/bad\u0007-1.0.dist-info/METADATA', '')
      write('real/site/secret-9.9.dist-info/METADATA', '')
      fs.symlinkSync(path.join(root, 'real'), path.join(root, 'linked'))
      fs.symlinkSync('/usr/lib', path.join(root, '.venv', 'lib'))
      const r = await readResolvedTrees(root)
      const npm = r.trees.find((t) => t.kind === 'npm')
      expect(npm).toMatchObject({ total: 1, packages: ['ok@1.0.0'] })
      expect(npm?.note).toBe('3 entries with unlisted names or versions left out')
      const py = r.trees.filter((t) => t.kind === 'python').map((t) => [t.path, t.packages])
      expect(py).toEqual([
        ['.venv/site', ['ok==1.0']],
        ['real/site', ['secret==9.9']]
      ])
    })

    test('the search is bounded: depth and folder count', async () => {
      write('a/b/c/d/e/f/deep-1.0.dist-info/METADATA', '')
      for (let i = 0; i < 30; i++) fs.mkdirSync(path.join(root, `w${i}`))
      expect((await readResolvedTrees(root)).trees).toEqual([])
      const r = await readResolvedTrees(root, { maxFolders: 10 })
      expect(r.note).toMatch(/searched the first 10 folders/)
    })

    test('thousands of distribution folders: the first few recorded, the report stays small', async () => {
      for (let i = 0; i < 60; i++)
        write(`s${String(i).padStart(2, '0')}/p-1.0.dist-info/METADATA`, '')
      const r = await readResolvedTrees(root)
      expect(r.trees).toHaveLength(MAX_PYTHON_TREES)
      expect(r.note).toMatch(/recorded the first 20 folders of Python distributions/)
    })
  })
})
