// Process execution and dynamic code: downloaded or decoded text that runs, child processes, eval.
import type { LineRule } from './finding.js'

export const PROCESS_LINE_RULES: LineRule[] = [
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
  }
]
