// What kind of file a path is: documentation, a lockfile, a test, code.
import { CI_FILES } from './ci-agent-files.js'

const DOC = /\.(md|markdown|rst|txt|adoc|asciidoc)$|(^|\/)(docs?|LICENSE|CHANGELOG|NOTICE)(\/|$)/i
export const LOCKFILE =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|go\.sum|Cargo\.lock|poetry\.lock|Pipfile\.lock|uv\.lock|composer\.lock|Gemfile\.lock|pdm\.lock)$/
const TEST_FILE =
  /(^|\/)(__tests__|tests?|spec|specs|testing)\/|[._-](test|spec)\.[cm]?[jt]sx?$|_test\.go$|(^|\/)test_[^/]*\.py$|_test\.py$|\.bats$|(^|\/)conftest\.py$/i
export const CODE =
  /\.([cm]?[jt]sx?|py|pyw|go|rs|rb|php|pl|java|kt|kts|scala|cs|swift|lua|sh|bash|zsh|ps1|psm1|bat|cmd|gradle)$|(^|\/)(Makefile|Dockerfile|Jenkinsfile|Rakefile)$/i

export function isDocPath(p: string): boolean {
  return DOC.test(p) && !CI_FILES.some(([re]) => re.test(p))
}
export function isTestPath(p: string): boolean {
  return TEST_FILE.test(p)
}
