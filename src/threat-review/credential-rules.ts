// Credentials: secrets read from the environment or disk, and secrets written into the code.
import type { LineRule } from './finding.js'

/** Secret-looking environment names (upper case, as environment variables are). */
const SECRET_NAME = String.raw`\w*(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|AUTH)\w*`
export const CREDENTIAL_READ = new RegExp(
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
/** The whole environment, or a credential store on disk. */
export const WHOLE_ENV =
  /process\.env(?!\s*(\.|\[\s*["'`]?\w))|os\.environ(?!\s*(\.get\(|\[))|os\.Environ\(|(?<![.\w-])(printenv|env)\s*(\||>|\)|$)|\.ssh\/|id_rsa|id_ed25519|\.aws\/credentials|\.git-credentials|\.netrc|\.npmrc|\.pypirc|\.docker\/config\.json|\.kube\/config|\/proc\/self\/environ|find-generic-password|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST/

export const CREDENTIAL_LINE_RULES: LineRule[] = [
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
  }
]
