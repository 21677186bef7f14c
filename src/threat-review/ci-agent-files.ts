// CI and agent files: a change to a file that runs with the repository's permissions, decides who
// reviews, instructs the next AI agent, or runs on a developer's machine.
import type { ThreatFinding } from './finding.js'
import type { PatchFile } from './patch.js'

export const CI_FILES: [RegExp, string][] = [
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

export function ciAndAgentFiles(f: PatchFile, out: ThreatFinding[]): void {
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
