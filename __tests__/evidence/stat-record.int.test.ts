import * as fs from 'node:fs'
import * as path from 'node:path'
import { makeWorkspace, read, runAirlock } from '../support/run.js'

// The snapshot skips re-reading files whose stat record (device, inode, size, mode, ctime) is
// unchanged since the workspace was written. An agent controls mtime (`touch -d`, `touch -r`),
// size and contents, but not ctime: a rewrite that forges everything it can must still be seen.
describe('stat record of the workspace against a forging agent', () => {
  let ws: string
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('a file rewritten in place or replaced, keeping its size and exact mtime, is still in the diff', async () => {
    const files: Record<string, string> = {
      'src/a.txt': 'one\n',
      'src/b.txt': 'bee\n',
      'src/c.txt': 'sea\n'
    }
    for (let i = 0; i < 40; i++) files[`lib/f${i}.txt`] = `unchanged ${i}\n`
    ws = makeWorkspace(files)
    const show = (f: string): string => `stat -c '${f} %s %y %i' ${f}`
    const agent = [
      'set -e',
      show('src/a.txt'),
      show('src/b.txt'),
      show('src/c.txt'),
      // a: same inode, same size, mtime put back to the nanosecond.
      'touch -r src/a.txt "$HOME/stamp-a"',
      "printf 'TWO\\n' > src/a.txt",
      'touch -r "$HOME/stamp-a" src/a.txt',
      // b: a new file renamed over it, same size and mtime.
      "printf 'BEE\\n' > src/b.new",
      'touch -r src/b.txt src/b.new',
      'mv src/b.new src/b.txt',
      // c: rewritten twice, then its mtime put back.
      'touch -r src/c.txt "$HOME/stamp-c"',
      "printf 'xxx\\n' > src/c.txt",
      "printf 'SEA\\n' > src/c.txt",
      'touch -r "$HOME/stamp-c" src/c.txt',
      'echo after',
      show('src/a.txt'),
      show('src/b.txt'),
      show('src/c.txt')
    ].join('\n')
    const run = await runAirlock(ws, { 'agent-command': agent, task: 'forge stat data' })
    expect(run.report.agent.exitCode).toBe(0)

    // The forgery worked as far as an agent can take it: a's and c's size, mtime and inode are as
    // before; b has its size and mtime (a new inode).
    const log = read(path.join(run.outputDir, 'logs', 'agent.log')).split('\n')
    const at = log.indexOf('after')
    const before = log.slice(0, at).filter((l) => l.startsWith('src/'))
    const after = log.slice(at + 1).filter((l) => l.startsWith('src/'))
    expect(after[0]).toBe(before[0])
    expect(after[2]).toBe(before[2])
    expect(after[1].split(' ').slice(0, 4)).toEqual(before[1].split(' ').slice(0, 4))

    // Still, every rewrite is in the diff, with its new contents.
    expect(run.report.diff.files.map((f) => [f.path, f.status])).toEqual([
      ['src/a.txt', 'modified'],
      ['src/b.txt', 'modified'],
      ['src/c.txt', 'modified']
    ])
    const patch = read(path.join(run.outputDir, 'diff.patch'))
    for (const line of ['-one', '+TWO', '-bee', '+BEE', '-sea', '+SEA'])
      expect(patch).toContain(`\n${line}\n`)

    // And the record was in use: the untouched files were not read again.
    const note = run.log.lines.find((l) => l.startsWith('snapshot: '))
    expect(note).toMatch(/^snapshot: 3 file\(s\) read, 40 unchanged since written/)
  })
})
