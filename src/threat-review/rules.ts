// The deterministic threat rules: what each added (or removed) line of a change is checked for,
// by class. Every rule is a plain pattern over the line as written and over the line with its
// string splits joined ("ht" + "tp" → "http"), so a finding names the exact line and says why.
// Pure: no model, no network, no file read.
import { hasHidden } from '../text-filter.js'
import { isSourcePath } from '../evidence/diff.js'
import type { PatchFile, PatchLine } from './patch.js'
import { typosquat } from './typosquat.js'
import type { Ecosystem } from './typosquat.js'

export const THREAT_CLASSES = [
  'outbound-endpoint',
  'process-execution',
  'encoded-blob',
  'install-hook',
  'typosquat',
  'credential',
  'test-weakening',
  'ci-or-agent-file'
] as const
export type ThreatClass = (typeof THREAT_CLASSES)[number]

/** high: what a change rarely does for an ordinary reason (the verdict is malicious). */
export type ThreatSeverity = 'high' | 'medium'

export interface ThreatFinding {
  path: string
  /** The line in the new file (RIGHT) or, for a removed line, the old file (LEFT); null: the file. */
  line: number | null
  side: 'RIGHT' | 'LEFT'
  class: ThreatClass
  rule: string
  severity: ThreatSeverity
  why: string
  /** The text that matched (at most 120 characters; never for credentials). */
  match?: string
}

/** Characters of one line the rules read (a longer line is also a finding of its own). */
const MAX_LINE = 64 * 1024
const MAX_MATCH = 120

// ---------------------------------------------------------------------------------------------
// What kind of file a path is.

const DOC = /\.(md|markdown|rst|txt|adoc|asciidoc)$|(^|\/)(docs?|LICENSE|CHANGELOG|NOTICE)(\/|$)/i
const LOCKFILE =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|go\.sum|Cargo\.lock|poetry\.lock|Pipfile\.lock|uv\.lock|composer\.lock|Gemfile\.lock|pdm\.lock)$/
const TEST_FILE =
  /(^|\/)(__tests__|tests?|spec|specs|testing)\/|[._-](test|spec)\.[cm]?[jt]sx?$|_test\.go$|(^|\/)test_[^/]*\.py$|_test\.py$|\.bats$|(^|\/)conftest\.py$/i
const CODE =
  /\.([cm]?[jt]sx?|py|pyw|go|rs|rb|php|pl|java|kt|kts|scala|cs|swift|lua|sh|bash|zsh|ps1|psm1|bat|cmd|gradle)$|(^|\/)(Makefile|Dockerfile|Jenkinsfile|Rakefile)$/i

const CI_FILES: [RegExp, string][] = [
  [
    /^\.github\/(workflows|actions)\/|(^|\/)(\.gitlab-ci\.yml|azure-pipelines\.ya?ml|bitbucket-pipelines\.yml|\.travis\.yml|\.drone\.ya?ml|Jenkinsfile)$|^\.(circleci|buildkite)\//,
    'a CI file: it runs with the repository’s CI permissions and secrets'
  ],
  [
    /(^|\/)CODEOWNERS$|^\.github\/(airlock\.ya?ml|dependabot\.ya?ml)$/,
    'a file that decides who reviews, or how this repository is guarded'
  ],
  [
    /(^|\/)(AGENTS\.md|CLAUDE\.md|GEMINI\.md|\.cursorrules|\.windsurfrules|\.clinerules|\.aider\.conf\.ya?ml|\.mcp\.json|mcp\.json)$|(^|\/)\.(cursor|claude|gemini|codex|continue|roo|windsurf)\/|^\.github\/(copilot-instructions\.md|instructions\/|prompts\/|chatmodes\/)|^\.vscode\/mcp\.json$/,
    'an instruction or tool file for AI agents: the next agent that works here reads it'
  ],
  [
    /^\.husky\/|(^|\/)\.pre-commit-config\.ya?ml$|^\.githooks\/|^\.devcontainer\/|^\.vscode\/(tasks|settings|launch)\.json$|(^|\/)\.envrc$/,
    'a file that runs on a developer’s machine (git hooks, dev container, editor tasks)'
  ]
]

export function isDocPath(p: string): boolean {
  return DOC.test(p) && !CI_FILES.some(([re]) => re.test(p))
}
export function isTestPath(p: string): boolean {
  return TEST_FILE.test(p)
}

// ---------------------------------------------------------------------------------------------
// Lines as read: comments, and string splits joined.

/** A line that is only a comment (the rules on endpoints skip it: a link in a comment runs nothing). */
function isComment(text: string): boolean {
  return /^\s*(\/\/(?!go:)|#(?!!)|\*|\/\*|<!--|--\s|;|REM\s)/.test(text)
}

/**
 * The line with string splits joined and escapes decoded, the way an attacker splits a name to
 * hide it: `"ht" + "tps"`, `'ev' 'al'` (Python), `"cu""rl"` (shell), `["e","v","a","l"].join("")`,
 * `\x65\x76\x61\x6c`.
 */
export function joined(text: string): string {
  if (!/["'`\\]/.test(text)) return text
  let t = text
    .replace(/(["'`])\s*\+\s*(["'`])/g, '')
    .replace(/(["'])\s*\.\s*(["'])/g, '') // PHP / Perl concatenation
    .replace(/(["'])[ \t]+(["'])/g, '')
    .replace(/(["'])\1(?=\w)/g, '')
  if (/\.join\(|\bjoin\(|strings\.Join/.test(t)) t = t.replace(/(["'])\s*,\s*(["'])/g, '')
  t = t
    .replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\u\{?([0-9a-fA-F]{4})\}?/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
  return t
}

// ---------------------------------------------------------------------------------------------
// Line rules: [class, rule, severity, pattern, why]. A pattern runs on the line and its joined form.

interface LineRule {
  class: ThreatClass
  rule: string
  severity: ThreatSeverity
  re: RegExp
  why: string
  /** Which files it reads (default: code and configuration, not docs or lockfiles). */
  files?: (p: string) => boolean
  /** Runs on comment lines too. */
  comments?: boolean
  /** A further check of the match. */
  accept?: (m: RegExpExecArray) => boolean
}

const NETWORK_CALL =
  /\b(fetch|axios(\.\w+)?|superagent(\.\w+)?|https?\.(request|get)|navigator\.sendBeacon|requests\.(get|post|put|patch|request)|urllib\.request\.\w+|urlopen|httpx\.(get|post|put|request)|http\.(Get|Post|PostForm|NewRequest)|dns\.(resolve\w*|lookup))\s*\(|\bnew\s+XMLHttpRequest\b|(^|[\s;|&(])(curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\s/
/** Secret-looking environment names (upper case, as environment variables are). */
const SECRET_NAME = String.raw`\w*(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|AUTH)\w*`
const CREDENTIAL_READ = new RegExp(
  [
    String.raw`process\.env(?!\s*(\.|\[\s*["'\`]?\w))`,
    String.raw`process\.env(\.|\[\s*["'\`])${SECRET_NAME}`,
    String.raw`process\.env\[\s*[^"'\`\s]`,
    String.raw`os\.environ(?!\s*(\.get\(|\[))`,
    String.raw`os\.environ(\.get\(|\[)\s*["']${SECRET_NAME}`,
    String.raw`os\.[Gg]etenv\(\s*["']${SECRET_NAME}`,
    String.raw`os\.Environ\(`,
    String.raw`ENV\[\s*["']${SECRET_NAME}`,
    String.raw`\$\{?${SECRET_NAME}\}?`,
    String.raw`\$\{\{\s*secrets\.`,
    String.raw`\$\(\s*(printenv|env|set)\s*\)`,
    String.raw`(\.ssh\/|id_rsa|id_ed25519|\.aws\/credentials|\.git-credentials|\.netrc|\.npmrc|\.pypirc|\.docker\/config\.json|\.kube\/config|\/proc\/self\/environ|find-generic-password)`
  ].join('|')
)

const LINE_RULES: LineRule[] = [
  // --- outbound endpoints
  {
    class: 'outbound-endpoint',
    rule: 'reverse-shell',
    severity: 'high',
    re: /\/dev\/(tcp|udp)\/|\bnc(at)?\b[^\n|;]*\s-[a-z]*e\s|\bsocat\b[^\n]*exec:|\bbash\s+-i\s+>&|pty\.spawn\(/,
    why: 'opens a shell to a remote host (a reverse shell)'
  },
  {
    class: 'outbound-endpoint',
    rule: 'socket',
    severity: 'medium',
    re: /\bdns\.(resolve\w*|lookup)\s*\(|\bsocket\.gethostbyname\s*\(|\bnet\.Lookup(Host|IP|TXT|Addr)\s*\(|(^|[\s;|&])(nslookup|dig|host)\s+[\w$]|\bnet\.(connect|createConnection|Socket|Dial\w*)\b|\btls\.(connect|Dial)\b|\bdgram\.createSocket\b|new\s+WebSocket\s*\(|\bsocket\.(socket|create_connection)\s*\(|\bsocket\.AF_INET\b|\bnet\.Dial(er|TCP|UDP)?\b|\b(nc|ncat|netcat|socat|telnet)\s+(-\w+\s+)*[\w.-]+\s+\d{2,5}\b/,
    why: 'opens a network connection of its own'
  },
  // --- process execution and dynamic code
  {
    class: 'process-execution',
    rule: 'download-and-run',
    severity: 'high',
    re: /\b(curl|wget|iwr|Invoke-WebRequest|fetch)\b[^\n]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\b(ba)?sh\s+<\(\s*(curl|wget)|\b(iex|Invoke-Expression)\b[^\n]*(DownloadString|iwr|Invoke-WebRequest)|(ba)?sh\s+-c\s+["']?\$\((curl|wget)/,
    why: 'downloads a script and runs it'
  },
  {
    class: 'process-execution',
    rule: 'decode-and-run',
    severity: 'high',
    re: /\b(eval|exec|Function|execSync|system|popen)\s*\(\s*(atob|Buffer\.from|base64\.b64decode|base64\.decodebytes|codecs\.decode|zlib\.decompress|bytes\.fromhex|unhexlify|marshal\.loads|decodeURIComponent|unescape|String\.fromCharCode)|\bbase64\s+(-d|--decode)\b[^\n]*\|\s*(ba)?sh\b|\|\s*base64\s+(-d|--decode)\s*\|\s*(ba)?sh/,
    why: 'decodes hidden text and runs it as code'
  },
  {
    class: 'process-execution',
    rule: 'child-process',
    severity: 'medium',
    re: /\b(child_process|execSync|execFileSync|spawnSync|execa)\b|\b(spawn|execFile|fork)\s*\(|(?<![.\w])exec\s*\(\s*[`'"]|\bshelljs\b|\bBun\.spawn/,
    why: 'starts a process (Node’s child_process)',
    files: (p) => /\.[cm]?[jt]sx?$/.test(p)
  },
  {
    class: 'process-execution',
    rule: 'subprocess',
    severity: 'medium',
    re: /\bsubprocess\.(run|call|Popen|check_output|check_call|getoutput|getstatusoutput)\b|\bos\.(system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawn)\s*\(|\bcommands\.getoutput\b|\bpexpect\.spawn\b/,
    why: 'starts a process (Python’s subprocess / os.system)',
    files: (p) => /\.pyw?$/.test(p) || /(^|\/)setup\.py$/.test(p)
  },
  {
    class: 'process-execution',
    rule: 'exec-command',
    severity: 'medium',
    re: /\bexec\.Command(Context)?\s*\(|\bsyscall\.(Exec|ForkExec)\s*\(|\bos\.StartProcess\s*\(/,
    why: 'starts a process (Go’s os/exec)',
    files: (p) => /\.go$/.test(p)
  },
  {
    class: 'process-execution',
    rule: 'dynamic-code',
    severity: 'medium',
    re: /(?<![.\w])(eval|exec)\s*\((?!\s*\))|\bnew\s+Function\s*\(|(?<![.\w])Function\s*\(\s*["'`]|\bvm\.(runIn\w+|Script|compileFunction)\b|\bsetTimeout\s*\(\s*["'`]|\bcompile\s*\([^)]*["']exec["']|\b__import__\s*\(|\bimportlib\.import_module\s*\(|\bgetattr\s*\(\s*(__builtins__|builtins|os|subprocess)\b|\b(globalThis|global|window|self)\s*\[\s*[^\]'"]|\brequire\s*\(\s*(?!["'`][^"'`]*["'`]\s*\))[^)]/,
    why: 'runs code built at run time (eval, Function, dynamic import or lookup)',
    files: (p) => /\.([cm]?[jt]sx?|pyw?)$/.test(p)
  },
  {
    class: 'process-execution',
    rule: 'shell-eval',
    severity: 'medium',
    re: /(^|[;&|]\s*)eval\s+["'$`]|\bsource\s+<\(|\|\s*(sudo\s+)?(ba|z|da)?sh\s*$|\|\s*(sudo\s+)?(ba|z|da)?sh\s+-s?\b/,
    why: 'runs text as shell commands',
    files: (p) =>
      /\.(sh|bash|zsh)$|(^|\/)(Makefile|Dockerfile)$|\.ya?ml$/.test(p) || !/\.\w+$/.test(p)
  },
  // --- encoded or packed content
  {
    class: 'encoded-blob',
    rule: 'base64-blob',
    severity: 'medium',
    re: /[A-Za-z0-9+/]{120,}={0,2}/,
    // Upper case, lower case and digits: base64, not a long word or a hex run.
    accept: (m) => /[A-Z]/.test(m[0]) && /[a-z]/.test(m[0]) && /\d/.test(m[0]),
    why: 'a long base64 run: content no reviewer can read'
  },
  {
    class: 'encoded-blob',
    rule: 'hex-blob',
    severity: 'medium',
    re: /(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){100,}(?![0-9a-fA-F])|(?:0x[0-9a-fA-F]{2}\s*,\s*){32,}/,
    why: 'a long run of hex bytes: content no reviewer can read'
  },
  {
    class: 'encoded-blob',
    rule: 'escape-run',
    severity: 'medium',
    re: /(?:\\x[0-9a-fA-F]{2}){12,}|(?:\\u[0-9a-fA-F]{4}){12,}|(?:\\[0-7]{3}){12,}/,
    why: 'a run of escaped bytes that spells hidden text'
  },
  {
    class: 'encoded-blob',
    rule: 'char-codes',
    severity: 'medium',
    re: /\bString\.fromCharCode\s*\(\s*(\d+\s*,\s*){5,}|(\bchr\s*\(\s*\d+\s*\)\s*\+\s*){4,}|\[\s*(\d{2,3}\s*,\s*){40,}|\[::-1\]|\.split\(\s*(""|'')\s*\)\.reverse\(\)\.join\(|\bstrings\.Reverse\b|\brev\s*<<</,
    why: 'builds text from character codes or reverses it: a way to hide a name'
  },
  // --- credentials
  {
    class: 'credential',
    rule: 'credential-access',
    severity: 'medium',
    re: /\$\(\s*(printenv|env|set)\s*\)|JSON\.stringify\(\s*process\.env\s*\)|\bObject\.(entries|keys|values)\(\s*process\.env\s*\)|\bdict\(\s*os\.environ\s*\)|\bos\.environ\.(copy|items)\(\)|\bos\.Environ\(\)|(^|[\s;|&])(printenv|env)\s*(\||>|$)|(\.ssh\/id_|id_rsa|id_ed25519|\.aws\/credentials|\.git-credentials|\.netrc|\.pypirc|\.docker\/config\.json|\.kube\/config|\/proc\/self\/environ|find-generic-password|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST)/,
    why: 'reads credentials or the whole environment'
  },
  {
    class: 'credential',
    rule: 'credential-assignment',
    severity: 'medium',
    re: /(password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key|client[_-]?secret)\w*["']?\s*[:=]\s*["'](?![^"']*(\$\{|\{\{|<|\*\*\*|xxx|changeme|example|placeholder|your[_-]|dummy|fake|test|redacted|process\.env))[A-Za-z0-9+/_\-.=]{16,}["']/i,
    why: 'a credential written into the code'
  },
  {
    class: 'credential',
    rule: 'token-prefix',
    severity: 'medium',
    re: /["'`](ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abposr]-|sk-ant-|sk-proj-|sk_live_|rk_live_|npm_|AKIA|ASIA|AIza|SG\.)[A-Za-z0-9_-]{6,}/,
    why: 'a string that starts like an access token (the rest may be elsewhere)'
  },
  // --- tests weakened
  {
    class: 'test-weakening',
    rule: 'test-skipped',
    severity: 'medium',
    re: /\b(it|test|describe|context|suite)\.(skip|todo)\s*\(|(?<![.\w])x(it|describe|test|context)\s*\(|@pytest\.mark\.(skip|skipif|xfail)\b|@unittest\.(skip|skipIf|skipUnless|expectedFailure)\b|\bpytest\.skip\s*\(|\bself\.skipTest\s*\(|\bt\.Skip(Now|f)?\s*\(|^\s*skip\s*(["']|$)/,
    why: 'skips a test',
    files: isTestPath
  },
  {
    class: 'test-weakening',
    rule: 'test-focused',
    severity: 'medium',
    re: /\b(it|test|describe|context)\.only\s*\(|(?<![.\w])f(it|describe)\s*\(/,
    why: 'focuses one test, so the others stop running',
    files: isTestPath
  },
  {
    class: 'test-weakening',
    rule: 'trivial-assertion',
    severity: 'medium',
    re: /expect\(\s*(true|1|false)\s*\)\.(toBe|toEqual)\(\s*\1\s*\)|\bassert\s+True\s*$|\bassert\s+1\s*$|assert\.(ok|isTrue)\(\s*true\s*\)/,
    why: 'an assertion that cannot fail',
    files: isTestPath
  },
  {
    class: 'test-weakening',
    rule: 'tests-disabled',
    severity: 'medium',
    re: /\b(jest|vitest|mocha|pytest|go\s+test|npm\s+(run\s+)?test|tox|cargo\s+test|make\s+test)\b[^\n]*\|\|\s*(true|exit\s+0|:)\s*["']?\s*,?$|--passWithNoTests\b|\btestPathIgnorePatterns\b|--exitzero\b|\bcollect_ignore\b|--deselect\b|continue-on-error:\s*true/,
    why: 'lets the tests pass whatever they find, or stops some from running',
    files: (p) => !LOCKFILE.test(p)
  }
]

// ---------------------------------------------------------------------------------------------
// Install-time hooks and dependencies: by the manifest they are in.

const NPM_HOOK =
  /^\s*"(preinstall|install|postinstall|preuninstall|postuninstall|prepare|prepublish|prepack|postpack|dependencies)"\s*:\s*"([^"]*)"/
const HOOK_DANGER =
  /\b(curl|wget|node\s+-e|node\s+--eval|python\d?\s+-c|eval|base64|bash\s+-c|sh\s+-c|https?:|\|\s*(ba)?sh)\b/

function installHooks(f: PatchFile, out: ThreatFinding[]): void {
  const name = f.path.slice(f.path.lastIndexOf('/') + 1)
  const add = (l: PatchLine | null, rule: string, severity: ThreatSeverity, why: string): void => {
    out.push({
      path: f.path,
      line: l?.line ?? null,
      side: 'RIGHT',
      class: 'install-hook',
      rule,
      severity,
      why,
      ...(l ? { match: cut(l.text.trim()) } : {})
    })
  }
  if (name === 'package.json' || name === 'composer.json') {
    for (const l of f.added) {
      const m = NPM_HOOK.exec(l.text)
      const composer = /^\s*"(pre|post)-(install|update|autoload-dump)-cmd"\s*:/.exec(l.text)
      if (m && m[1] !== 'dependencies') {
        const danger = HOOK_DANGER.test(m[2])
        add(
          l,
          'npm-lifecycle',
          danger ? 'high' : 'medium',
          `an npm "${m[1]}" script: it runs on every install${danger ? ', and it fetches or evaluates code' : ''}`
        )
      } else if (composer)
        add(l, 'composer-script', 'medium', 'a Composer script that runs on install')
    }
    return
  }
  if (name === 'setup.py') {
    const hook = f.added.find((l) =>
      /\bcmdclass\b|class\s+\w+\s*\(\s*(install|develop|egg_info|build_py|build_ext|sdist)\s*\)/.test(
        l.text
      )
    )
    if (hook)
      add(
        hook,
        'setup-py-command',
        'high',
        'setup.py replaces an install command: it runs code on pip install'
      )
    else if (f.status === 'added' && f.added.length > 0)
      add(f.added[0], 'setup-py', 'medium', 'a new setup.py: its code runs on pip install')
    return
  }
  if (name === 'pyproject.toml' || name === 'setup.cfg') {
    for (const l of f.added)
      if (
        /^\s*\[tool\.(setuptools\.cmdclass|hatch\.build\.hooks|hatch\.build\.targets\.\w+\.hooks)|^\s*build-backend\s*=|^\s*backend-path\s*=|^\s*cmdclass\s*=/.test(
          l.text
        )
      )
        add(
          l,
          'python-build-hook',
          'medium',
          'changes what runs when the package is built or installed'
        )
    return
  }
  if (/\.pth$/.test(name) || /^(sitecustomize|usercustomize)\.py$/.test(name)) {
    add(
      f.added[0] ?? null,
      'python-startup',
      'high',
      'Python runs this file at every interpreter start'
    )
    return
  }
  if (name === 'build.rs') {
    if (f.status !== 'deleted')
      add(
        f.added[0] ?? null,
        'build-script',
        'medium',
        'a Cargo build script: it runs on every build'
      )
    return
  }
  if (name === 'Cargo.toml') {
    for (const l of f.added)
      if (/^\s*build\s*=\s*["']/.test(l.text))
        add(l, 'build-script', 'medium', 'names a Cargo build script')
    return
  }
  if (/\.gradle(\.kts)?$/.test(name)) {
    for (const l of f.added)
      if (
        /\bapply\s+plugin\b|^\s*id\s*\(?\s*["']|\bcommandLine\b|\bexec\s*\{|Runtime\.getRuntime\(\)\.exec|\bProcessBuilder\b|\bclasspath\s*\(?\s*["']/.test(
          l.text
        )
      )
        add(
          l,
          'gradle-plugin',
          /commandLine|exec\s*\{|Runtime|ProcessBuilder/.test(l.text) ? 'high' : 'medium',
          'a Gradle plugin or command: it runs when the project builds'
        )
    return
  }
  if (name === 'pom.xml') {
    for (const l of f.added)
      if (/<plugin>|exec-maven-plugin|maven-antrun-plugin|<executions>|<extension>/.test(l.text))
        add(
          l,
          'maven-plugin',
          /exec-maven|antrun/.test(l.text) ? 'high' : 'medium',
          'a Maven plugin: it runs when the project builds'
        )
    return
  }
  if (name === 'binding.gyp' || name === 'extconf.rb') {
    if (f.status !== 'deleted')
      add(f.added[0] ?? null, 'native-build', 'medium', 'a native build file: it runs on install')
    return
  }
  if (name === '.npmrc' || name === '.yarnrc' || name === '.yarnrc.yml') {
    for (const l of f.added)
      if (
        /script-shell|ignore-scripts\s*=\s*false|registry\s*[=:]|node-options|onlyBuiltDependencies|enableScripts/.test(
          l.text
        )
      )
        add(
          l,
          'package-manager-config',
          'medium',
          'changes how the package manager installs (registry, scripts)'
        )
    return
  }
  if (/\.go$/.test(name)) {
    for (const l of f.added)
      if (/^\s*\/\/go:generate\s/.test(l.text)) {
        const danger = HOOK_DANGER.test(l.text)
        add(
          l,
          'go-generate',
          danger ? 'high' : 'medium',
          `a go:generate command: it runs on \`go generate\`${danger ? ', and it fetches or evaluates code' : ''}`
        )
      }
  }
}

const NPM_SPEC =
  /^(\^|~|>=?|<=?|=)?\s*v?\d|^\*$|^latest$|^next$|^npm:|^git(\+[a-z]+)?:|^github:|^gitlab:|^bitbucket:|^https?:|^file:|^link:|^workspace:|^[\w.-]+\/[\w.-]+(#.*)?$/
const NON_DEP_KEYS = new Set([
  'version',
  'node',
  'npm',
  'yarn',
  'pnpm',
  'vscode',
  'typescript-version'
])
const OFF_REGISTRY =
  /^(git(\+[a-z]+)?:|github:|gitlab:|bitbucket:|https?:|file:|link:|[\w.-]+\/[\w.-]+(#.*)?$)/

/** The dependency names a file's added lines declare, with their line and ecosystem. */
export function declaredDependencies(
  f: PatchFile
): { eco: Ecosystem; name: string; line: PatchLine; source?: string }[] {
  const out: { eco: Ecosystem; name: string; line: PatchLine; source?: string }[] = []
  const name = f.path.slice(f.path.lastIndexOf('/') + 1)
  for (const l of f.added) {
    // JSON and TOML escapes decoded: "\u0435xpress" is the name npm installs.
    const t = joined(l.text)
    if (name === 'package.json') {
      const m = /^\s*"(@?[^"\s]+)"\s*:\s*"([^"]*)"/.exec(t)
      if (!m || NON_DEP_KEYS.has(m[1]) || !NPM_SPEC.test(m[2])) continue
      const alias = /^npm:(@?[^@]+)/.exec(m[2])
      out.push({
        eco: 'npm',
        name: m[1],
        line: l,
        ...(OFF_REGISTRY.test(m[2]) ? { source: m[2] } : {})
      })
      if (alias) out.push({ eco: 'npm', name: alias[1], line: l })
    } else if (/^(requirements|constraints)[\w.-]*\.(txt|in)$|\.requirements\.txt$/.test(name)) {
      if (/^\s*(-i|--index-url|--extra-index-url|--trusted-host|-f|--find-links)\b/.test(t)) {
        out.push({ eco: 'pypi', name: '', line: l, source: t.trim() })
        continue
      }
      if (/^\s*(-e\s+)?(git\+|https?:|file:)/.test(t)) {
        out.push({ eco: 'pypi', name: '', line: l, source: t.trim() })
        continue
      }
      const m =
        /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(==|>=|<=|~=|!=|===|<|>|;|@|$)/.exec(t)
      if (m)
        out.push({
          eco: 'pypi',
          name: m[1],
          line: l,
          ...(/@\s*(git\+|https?:|file:)/.test(t) ? { source: t.trim() } : {})
        })
    } else if (
      name === 'pyproject.toml' ||
      name === 'setup.py' ||
      name === 'setup.cfg' ||
      name === 'Pipfile'
    ) {
      for (const m of t.matchAll(
        /["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(==|>=|<=|~=|!=|<|>|@)[^"']*["']/g
      ))
        out.push({ eco: 'pypi', name: m[1], line: l })
      const poetry =
        /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*(["']\s*[\^~>=<*\d]|\{\s*(version|git|path|url)\b)/.exec(
          t
        )
      if (
        poetry &&
        !['python', 'version', 'requires-python', 'name'].includes(poetry[1].toLowerCase())
      )
        out.push({
          eco: 'pypi',
          name: poetry[1],
          line: l,
          ...(/\b(git|path|url)\s*=/.test(t) ? { source: t.trim() } : {})
        })
    } else if (name === 'go.mod') {
      const m = /^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]{2,}(?:\/[^\s]+)?)\s+v\d/.exec(t)
      if (m && !/^\s*module\s/.test(t)) out.push({ eco: 'go', name: m[1], line: l })
      if (/^\s*replace\s|=>\s*(\.{1,2}\/|\/)/.test(t))
        out.push({ eco: 'go', name: '', line: l, source: t.trim() })
    } else if (name === 'Cargo.toml') {
      const m =
        /^\s*([A-Za-z0-9_-]+)\s*=\s*(["']\s*[\^~>=<*\d]|\{[^}]*\b(version|git|path)\s*=)/.exec(t)
      if (m && !['version', 'edition', 'rust-version', 'name', 'resolver'].includes(m[1]))
        out.push({
          eco: 'crates',
          name: m[1],
          line: l,
          ...(/\b(git|path)\s*=/.test(t) ? { source: t.trim() } : {})
        })
    } else if (/\.go$/.test(name)) {
      const m = /^\s*(?:import\s+)?(?:\w+\s+)?"([a-z0-9.-]+\.[a-z]{2,}\/[^"]+)"/.exec(t)
      if (m) out.push({ eco: 'go', name: m[1].split('/').slice(0, 3).join('/'), line: l })
    } else if (/\.[cm]?[jt]sx?$/.test(name)) {
      for (const m of t.matchAll(
        /\b(?:require\s*\(\s*|from\s+|import\s+)["']((?:@[\w.-]+\/)?[\w.-]+)[^"']*["']/g
      ))
        if (!m[1].startsWith('.') && !m[1].startsWith('node:'))
          out.push({ eco: 'npm', name: m[1], line: l })
    }
  }
  return out
}

function dependencies(f: PatchFile, out: ThreatFinding[]): void {
  const seen = new Set<string>()
  for (const d of declaredDependencies(f)) {
    if (d.source !== undefined) {
      out.push({
        path: f.path,
        line: d.line.line,
        side: 'RIGHT',
        class: 'typosquat',
        rule: 'dependency-source',
        severity: 'medium',
        why: 'a dependency or package index outside the public registry (a git URL, a path, another index): what it installs is not what its name says',
        match: cut(d.line.text.trim())
      })
    }
    if (d.name === '' || seen.has(`${d.eco}\0${d.name}`)) continue
    seen.add(`${d.eco}\0${d.name}`)
    const s = typosquat(d.eco, d.name)
    if (s === null) continue
    out.push({
      path: f.path,
      line: d.line.line,
      side: 'RIGHT',
      class: 'typosquat',
      rule: 'typosquat',
      severity: 'high',
      why: `the dependency "${d.name}" ${s.why}`,
      match: cut(d.line.text.trim())
    })
  }
}

// ---------------------------------------------------------------------------------------------
// Whole-file rules.

const ASSERTION =
  /\b(expect|assert\w*|should)\s*[.(]|\bt\.(Error|Errorf|Fatal|Fatalf|Fail)\b|\b(require|assert)\.\w+\(|\bself\.assert\w+\(|^\s*assert\s|\bdeepEqual\(|\bstrictEqual\(/

function testChanges(f: PatchFile, out: ThreatFinding[]): void {
  if (!isTestPath(f.path)) return
  if (f.status === 'deleted') {
    out.push({
      path: f.path,
      line: null,
      side: 'LEFT',
      class: 'test-weakening',
      rule: 'test-deleted',
      severity: 'medium',
      why: `a test file is deleted (${f.removed.filter((l) => ASSERTION.test(l.text)).length} assertion line(s) gone)`
    })
    return
  }
  const removed = f.removed.filter((l) => ASSERTION.test(l.text))
  const added = f.added.filter((l) => ASSERTION.test(l.text))
  if (removed.length > added.length) {
    out.push({
      path: f.path,
      line: removed[0].line,
      side: 'LEFT',
      class: 'test-weakening',
      rule: 'assertions-removed',
      severity: 'medium',
      why: `${removed.length - added.length} fewer assertion line(s) than before (${removed.length} removed, ${added.length} added)`,
      match: cut(removed[0].text.trim())
    })
  } else if (removed.length > 0) {
    // As many assertions, but weaker ones: `== 5` become `is not None`.
    const weak = (ls: PatchLine[]): PatchLine[] => ls.filter((l) => WEAK_ASSERTION.test(l.text))
    const weaker = weak(added)
    if (weaker.length > weak(removed).length)
      out.push({
        path: f.path,
        line: weaker[0].line,
        side: 'RIGHT',
        class: 'test-weakening',
        rule: 'assertion-weakened',
        severity: 'medium',
        why: 'an assertion is replaced by one that checks less (defined, truthy, not None)',
        match: cut(weaker[0].text.trim())
      })
  }
  // Fewer tests declared than before: removed, or renamed so the runner no longer finds them.
  const gone = f.removed.filter((l) => TEST_DECLARATION.test(l.text)).length
  const come = f.added.filter((l) => TEST_DECLARATION.test(l.text)).length
  if (gone > come) {
    const first = f.removed.find((l) => TEST_DECLARATION.test(l.text)) as PatchLine
    out.push({
      path: f.path,
      line: first.line,
      side: 'LEFT',
      class: 'test-weakening',
      rule: 'tests-removed',
      severity: 'medium',
      why: `${gone - come} fewer test(s) declared than before (removed, or renamed so the runner no longer finds them)`,
      match: cut(first.text.trim())
    })
  }
}

const WEAK_ASSERTION =
  /\bis\s+not\s+None\b|\.(toBeDefined|toBeTruthy|toBeFalsy|not\.toBeUndefined|not\.toBeNull)\(\)|\bassert\.ok\(|\bassert\s+\w+\s*$|\bassertIsNotNone\(|\bassertTrue\(\s*\w+\s*\)|\brequire\.NotNil\(|\bassert\.NotNil\(|!=\s*nil\s*\{?\s*$/
const TEST_DECLARATION =
  /^\s*(it|test|specify)\s*\(\s*["'`]|^\s*def\s+test_?\w*\s*\(|^\s*func\s+Test\w*\s*\(\s*\w+\s+\*testing\.T\)|^\s*@test\s+["']/

function ciAndAgentFiles(f: PatchFile, out: ThreatFinding[]): void {
  for (const [re, why] of CI_FILES) {
    if (!re.test(f.path)) continue
    const first = f.added[0] ?? null
    out.push({
      path: f.path,
      line: first?.line ?? null,
      side: 'RIGHT',
      class: 'ci-or-agent-file',
      rule: why.startsWith('a CI')
        ? 'ci-file'
        : why.startsWith('an instruction')
          ? 'agent-instructions'
          : why.startsWith('a file that runs')
            ? 'developer-hook'
            : 'repository-guard',
      severity: 'medium',
      why: `${f.status === 'deleted' ? 'deletes ' : f.status === 'added' ? 'adds ' : 'changes '}${why}`
    })
    return
  }
}

function cut(text: string): string {
  const chars = [...text]
  return chars.length > MAX_MATCH ? chars.slice(0, MAX_MATCH - 1).join('') + '…' : text
}

const BENIGN_HOST =
  /^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[?::1\]?|([\w-]+\.)*example(\.(com|org|net))?|([\w-]+\.)*(test|invalid|localhost|local|internal)|json-schema\.org|(www\.)?w3\.org|schemas\.[\w.-]+|xmlns\.[\w.-]+|(www\.)?apache\.org|opensource\.org|spdx\.org|(www\.)?gnu\.org|purl\.org|semver\.org)$/i
const URL_RE =
  /\b(?:https?|wss?|ftp|sftp|ssh):\/\/(?:[^\s/@"'`]+@)?([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::\d+)?/g
/** The whole environment, or a credential store on disk. */
const WHOLE_ENV =
  /process\.env(?!\s*(\.|\[\s*["'`]?\w))|os\.environ(?!\s*(\.get\(|\[))|os\.Environ\(|(?<![.\w-])(printenv|env)\s*(\||>|\)|$)|\.ssh\/|id_rsa|id_ed25519|\.aws\/credentials|\.git-credentials|\.netrc|\.npmrc|\.pypirc|\.docker\/config\.json|\.kube\/config|\/proc\/self\/environ|find-generic-password|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST/

/** A host name alone in a string (no scheme): `"collect.attacker.xyz"`. */
const HOST_LITERAL =
  /["'`]((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|io|xyz|top|ru|cn|tk|ml|ga|cf|gq|sh|dev|app|cc|co|me|info|biz|site|online|link|club|pw|ws|su|to|in|us|uk|de|fr|eu|cloud|workers\.dev|ngrok\.io|onion))(?::\d+)?["'`]/gi
const IP_RE =
  /(?<![\w.@^~=v-])((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?![\w.])/g

function endpoints(f: PatchFile, l: PatchLine, text: string, out: ThreatFinding[]): void {
  const hosts = new Set<string>()
  for (const m of text.matchAll(URL_RE)) {
    // A link people follow (an anchor's href) is not a place the code sends anything.
    if (/\bhref\s*=\s*["']?$/.test(text.slice(Math.max(0, (m.index ?? 0) - 12), m.index))) continue
    hosts.add(m[1].toLowerCase())
  }
  for (const m of text.matchAll(IP_RE)) hosts.add(m[1])
  for (const m of text.matchAll(HOST_LITERAL))
    if (!/\.(json|js|ts|py|go|md|txt|yml|yaml|toml|lock|sh)$/i.test(m[1]))
      hosts.add(m[1].toLowerCase())
  for (const h of hosts) {
    // 0.x and 255.x are masks; four single digits read as a version (1.2.3.4) more than a host.
    if (BENIGN_HOST.test(h) || /^(0|255)\./.test(h) || /^\d\.\d\.\d\.\d$/.test(h)) continue
    const ip = /^[\d.]+$|^\[/.test(h)
    out.push({
      path: f.path,
      line: l.line,
      side: 'RIGHT',
      class: 'outbound-endpoint',
      rule: ip ? 'raw-ip' : 'url',
      severity: 'medium',
      why: ip
        ? `a raw IP address (${h}): an endpoint with no name to check`
        : `a new outbound endpoint: ${h}`,
      match: cut(l.text.trim())
    })
  }
}

/** Every finding of one file of the patch. */
export function fileFindings(f: PatchFile): ThreatFinding[] {
  const out: ThreatFinding[] = []
  ciAndAgentFiles(f, out)
  testChanges(f, out)
  if (f.binary) {
    if (
      f.status !== 'deleted' &&
      /\.(exe|dll|so|dylib|node|bin|jar|class|pyc|pyo|wasm|o|a)$/i.test(f.path)
    )
      out.push({
        path: f.path,
        line: null,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'binary-code',
        severity: 'medium',
        why: 'compiled code or a library is added as a binary: what it does cannot be read'
      })
    return out
  }
  installHooks(f, out)
  dependencies(f, out)
  const lock = LOCKFILE.test(f.path)
  const doc = isDocPath(f.path)
  const code =
    CODE.test(f.path) ||
    isSourcePath(f.path) ||
    !/\.\w+$/.test(f.path.slice(f.path.lastIndexOf('/') + 1))
  if (lock || doc || !code) return out
  if (/\.min\.(js|css)$/.test(f.path) && f.status === 'added')
    out.push({
      path: f.path,
      line: f.added[0]?.line ?? null,
      side: 'RIGHT',
      class: 'encoded-blob',
      rule: 'minified-file',
      severity: 'medium',
      why: 'a minified file is added: its code cannot be reviewed as written'
    })
  const rules = LINE_RULES.filter((r) => r.files === undefined || r.files(f.path))
  for (const l of f.added) {
    const raw = l.text.length > MAX_LINE ? l.text.slice(0, MAX_LINE) : l.text
    // Only a line with a character outside printable ASCII can hold a hidden one.
    if (/[^\t\x20-\x7e]/.test(raw) && hasHidden(raw)) {
      out.push({
        path: f.path,
        line: l.line,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'hidden-characters',
        severity: 'medium',
        why: 'invisible or bidi characters: the line may not run the way it reads'
      })
    }
    if (
      l.text.length >= 500 &&
      /\.([cm]?[jt]sx?|py|go|sh|rb|php|pl)$/.test(f.path) &&
      (l.text.match(/\s/g)?.length ?? 0) / l.text.length < 0.08
    ) {
      out.push({
        path: f.path,
        line: l.line,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'minified-line',
        severity: 'medium',
        why: `a ${l.text.length}-character line with almost no spaces: packed or minified code in a source file`
      })
    }
    const comment = isComment(raw)
    const j = joined(raw)
    if (!comment) endpoints(f, l, j, out)
    // One finding per class and line: the strongest rule of the class (listed strongest first).
    const done = new Set<ThreatClass>()
    for (const r of rules) {
      if (done.has(r.class)) continue
      if (comment && !r.comments && r.class !== 'encoded-blob') continue
      const hit = (m: RegExpExecArray | null): boolean => m !== null && (r.accept?.(m) ?? true)
      if (!(hit(r.re.exec(raw)) || (j !== raw && hit(r.re.exec(j))))) continue
      done.add(r.class)
      out.push({
        path: f.path,
        line: l.line,
        side: 'RIGHT',
        class: r.class,
        rule: r.rule,
        severity: r.severity,
        why: r.why,
        ...(r.class === 'credential' ? {} : { match: cut(raw.trim()) })
      })
    }
  }
  splitBlobs(f, out)
  combine(f, out)
  return out
}

/** A line that is mostly one base64 or hex run of 24 or more characters. */
const BLOB_PIECE = /[A-Za-z0-9+/=]{24,}/

/**
 * An encoded blob cut into short strings on consecutive lines (each under the blob rules' length):
 * four or more such lines in a row, 160 characters or more together.
 */
function splitBlobs(f: PatchFile, out: ThreatFinding[]): void {
  let run: PatchLine[] = []
  let chars = 0
  const flush = (): void => {
    if (run.length >= 4 && chars >= 160)
      out.push({
        path: f.path,
        line: run[0].line,
        side: 'RIGHT',
        class: 'encoded-blob',
        rule: 'split-blob',
        severity: 'medium',
        why: `${run.length} lines in a row of encoded text (${chars} characters): a blob cut into pieces`,
        match: cut(run[0].text.trim())
      })
    run = []
    chars = 0
  }
  for (const l of f.added) {
    const m = BLOB_PIECE.exec(l.text)
    const piece = m !== null && m[0].length >= 0.6 * l.text.trim().length && /\d/.test(m[0])
    if (!piece || (run.length > 0 && run[run.length - 1].line !== l.line - 1)) flush()
    if (piece) {
      run.push(l)
      chars += m[0].length
    }
  }
  flush()
}

/**
 * Signals that are ordinary alone and are not together, in one file: decoded text that is run, a
 * network request that carries credentials or the environment.
 */
function combine(f: PatchFile, out: ThreatFinding[]): void {
  const mine = out.filter((x) => x.path === f.path)
  const has = (c: ThreatClass, rules?: string[]): ThreatFinding | undefined =>
    mine.find((x) => x.class === c && (rules === undefined || rules.includes(x.rule)))
  const blob = has('encoded-blob', [
    'base64-blob',
    'hex-blob',
    'escape-run',
    'char-codes',
    'split-blob'
  ])
  const run = has('process-execution')
  if (blob && run && !mine.some((x) => x.rule === 'decode-and-run'))
    out.push({
      path: f.path,
      line: run.line,
      side: 'RIGHT',
      class: 'process-execution',
      rule: 'decode-and-run',
      severity: 'high',
      why: `runs code in a file that also adds encoded content (line ${blob.line ?? '?'}): hidden code may be what runs`,
      ...(run.match !== undefined ? { match: run.match } : {})
    })
  // A request, a socket or an endpoint, and credentials or the environment read, in one file.
  const live = f.added.filter((l) => !isComment(l.text))
  const net =
    has('outbound-endpoint') ??
    live.find((l) => NETWORK_CALL.test(l.text) || NETWORK_CALL.test(joined(l.text)))
  const creds = has('credential') ?? live.find((l) => CREDENTIAL_READ.test(joined(l.text)))
  if (net && creds && !mine.some((x) => x.rule === 'exfiltration')) {
    const netLine = 'class' in net ? net.line : net.line
    const match = 'class' in net ? net.match : cut(net.text.trim())
    const credText = f.added.find((l) => l.line === creds.line)?.text ?? ''
    // A named endpoint, or the whole environment / a credential file: rarely an ordinary client.
    const strong = 'class' in net || WHOLE_ENV.test(joined(credText))
    out.push({
      path: f.path,
      line: netLine,
      side: 'RIGHT',
      class: 'outbound-endpoint',
      rule: 'exfiltration',
      severity: strong ? 'high' : 'medium',
      why: `sends data out in a file that also reads ${strong ? 'credentials or the whole environment' : 'a secret-named variable'} (line ${creds.line ?? '?'})`,
      ...(match !== undefined ? { match } : {})
    })
  }
}
