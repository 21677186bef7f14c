// Agent presets (`agent: claude-code | codex | gemini-cli`): one word that fills the agent image,
// its command, the hosts and the credential route it needs. Every field is only a default: an
// input given explicitly, or a setting of the base branch's policy file, wins (docs/POLICY.md).
// Pure, apart from resolving paths.
import * as path from 'node:path'
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'

export const AGENT_INPUT = INPUT.agent

/**
 * The official Node image the presets build on and the egress proxy runs in, pinned by digest.
 * node:24-bookworm-slim, multi-platform index, as listed in docker-library/repo-info
 * (repos/node/remote/24-bookworm-slim.md, Node 24.18.1). To bump: take the new index digest
 * from that file (or `docker buildx imagetools inspect node:24-bookworm-slim`), replace it here
 * and in images/agents/*\/Dockerfile (`ARG BASE=`), and run the preset tests.
 */
export const DEFAULT_NODE_IMAGE =
  'node:24-bookworm-slim@sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7'

/** The default `proxy-image` with `network: allowlist`. */
export const DEFAULT_PROXY_IMAGE = DEFAULT_NODE_IMAGE

/** The host variable a preset's credential route reads the model key from. */
export const AGENT_KEY_ENV = 'AIRLOCK_AGENT_API_KEY'

/** How the proxy's transcript reads the model API's exchanges. */
export type TranscriptFormat = 'anthropic-messages' | 'openai-responses' | 'gemini-generate-content'

export interface AgentPreset {
  name: string
  /** The npm package of the CLI (pinned in the Dockerfile). */
  npmPackage: string
  /** Folder of the bundled Dockerfile, relative to the action's root. */
  imageDir: string
  /** The agent command; `model` (already checked) is passed to the CLI's model flag. */
  command(model: string | undefined): string
  allowHosts: string[]
  /** The credential route (`NAME=https://upstream|SECRET_ENV|HEADER[|…]|allow=…`), scoped to the model API calls. */
  credentials: string
  transcript: TranscriptFormat
}

/**
 * What every preset tells its CLI after the task: where its answer and its findings go
 * (docs/agent-output.md). No single quote inside: it sits in a single-quoted shell word.
 */
export const HANDBACK =
  'When you are done: write your answer for the pull request (a short summary of what you found or changed) to /airlock/out/summary.md. ' +
  'For findings about specific lines, write /airlock/out/review.json: {"findings": [{"path": "src/x.js", "line": 12, "side": "RIGHT", "severity": "warning", "body": "what and why", "suggestion": "the replacement line(s)"}]} ' +
  '(path relative to the repository root, line numbers of the pull request head, start_line for a range, suggestion optional).'

const TASK = `"$(cat /airlock/task.md; printf '\\n\\n%s\\n' '${HANDBACK}')"`
const modelFlag = (flag: string, model: string | undefined): string =>
  model === undefined ? '' : ` ${flag} '${model}'`

export const PRESETS: Record<string, AgentPreset> = {
  'claude-code': {
    name: 'claude-code',
    npmPackage: '@anthropic-ai/claude-code',
    imageDir: 'images/agents/claude-code',
    command: (model) =>
      `claude -p ${TASK} --permission-mode bypassPermissions --output-format stream-json --verbose${modelFlag('--model', model)} </dev/null`,
    allowHosts: [],
    credentials: `ANTHROPIC=https://api.anthropic.com|${AGENT_KEY_ENV}|x-api-key|allow=POST /v1/messages`,
    transcript: 'anthropic-messages'
  },
  codex: {
    name: 'codex',
    npmPackage: '@openai/codex',
    imageDir: 'images/agents/codex',
    // The airlock sandbox is the isolation: Codex's own sandbox needs kernel features the
    // hardened container does not grant.
    command: (model) =>
      `mkdir -p "$HOME/.codex" && cp /opt/airlock/codex/config.toml "$HOME/.codex/config.toml" && codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox --json${modelFlag('--model', model)} ${TASK} </dev/null`,
    allowHosts: [],
    credentials: `OPENAI=https://api.openai.com/v1|${AGENT_KEY_ENV}|bearer|allow=POST /responses`,
    transcript: 'openai-responses'
  },
  'gemini-cli': {
    name: 'gemini-cli',
    npmPackage: '@google/gemini-cli',
    imageDir: 'images/agents/gemini-cli',
    command: (model) =>
      `mkdir -p "$HOME/.gemini" && cp /opt/airlock/gemini/settings.json "$HOME/.gemini/settings.json" && gemini --yolo --skip-trust --output-format stream-json${modelFlag('--model', model)} --prompt ${TASK} </dev/null`,
    allowHosts: [],
    credentials: `GEMINI=https://generativelanguage.googleapis.com|${AGENT_KEY_ENV}|x-goog-api-key|GOOGLE_GEMINI_BASE_URL|GEMINI_API_KEY|allow=POST /v1beta/models`,
    transcript: 'gemini-generate-content'
  }
}

const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/

/** The preset named by `agent`, or undefined when it is not given. */
export function presetFor(raw: string | undefined): AgentPreset | undefined {
  if (raw === undefined) return undefined
  const preset = PRESETS[raw.trim()]
  if (preset === undefined) {
    throw new ConfigurationError(
      AGENT_INPUT,
      `"${raw}" is not a preset; use one of ${Object.keys(PRESETS).join(', ')}, or leave it empty and give dockerfile/image and agent-command`
    )
  }
  return preset
}

export interface PresetContext {
  /** The action's own folder (where images/agents/ is). */
  actionRoot: string
  environment: NodeJS.ProcessEnv
  /**
   * The settings of the base branch's policy file: above the preset's defaults (an input given
   * explicitly is above both).
   */
  policy?: Readonly<Record<string, string>>
  /** The event payload's pull request, to tell a fork's run why it has no key. */
  forkPullRequest?: boolean
}

/**
 * The reader of the run's inputs with the preset's defaults below the inputs given and below the
 * policy file: `given(name)` when set; nothing for a setting the policy file holds (the policy's
 * own reader fills it next); else the preset's value. Without `agent`, `given` itself (plus the
 * default proxy image with `network: allowlist`).
 */
export function withPreset(
  given: (name: string) => string | undefined,
  ctx: PresetContext
): { read: (name: string) => string | undefined; preset?: AgentPreset; dockerfile?: string } {
  const preset = presetFor(given(AGENT_INPUT))
  const policy = ctx.policy ?? {}
  const network = given(INPUT.network) ?? policy[INPUT.network]
  const allowlist = network === 'allowlist'
  const withProxy = (name: string, value: string | undefined): string | undefined =>
    value ?? (name === 'proxy-image' && allowlist ? DEFAULT_PROXY_IMAGE : undefined)
  if (preset === undefined) return { read: (n) => withProxy(n, given(n)) }
  const model = given(INPUT.model)
  if (model !== undefined && !MODEL.test(model)) {
    throw new ConfigurationError(
      'model',
      `"${model}" is not a model name (letters, digits and . _ : / @ -, at most 128)`
    )
  }
  if (network === 'none' && given(INPUT.network) === undefined) {
    throw new ConfigurationError(
      AGENT_INPUT,
      `${preset.name} reaches its model only through the egress proxy, and the policy file sets network: none, which an agent preset never loosens; run without \`agent\`, or give \`network: allowlist\` in the workflow (an input given explicitly overrides the policy file)`
    )
  }
  const ownImage = given(INPUT.dockerfile) !== undefined || given(INPUT.image) !== undefined
  const dockerfile = path.join(ctx.actionRoot, preset.imageDir, 'Dockerfile')
  // The key is needed by the preset's route, or by a route of the caller's that reads it too.
  const ownCredentials = given(INPUT.credentials)
  const needsKey = ownCredentials === undefined || ownCredentials.includes(`|${AGENT_KEY_ENV}|`)
  const key = ctx.environment[AGENT_KEY_ENV]
  if (needsKey && (key === undefined || key === '')) {
    throw new ConfigurationError(
      AGENT_INPUT,
      ctx.forkPullRequest === true
        ? `this pull request comes from a fork, and a fork's run never gets the model key, so ${preset.name} cannot run here; a maintainer with write access can run the agent on it by commenting \`/airlock run <instructions>\` (examples/comment-run.yml) or with a manual run for the pull request (examples/manual-task.yml)`
        : `${preset.name} needs the model key in the variable ${AGENT_KEY_ENV} (the proxy adds it to requests; the sandbox never sees it): set it on the step from a secret (the reusable workflow does this with its agent-api-key secret), or give credentials yourself`
    )
  }
  const values: Record<string, string> = {
    ...(ownImage ? {} : { dockerfile }),
    'agent-command': preset.command(model),
    network: 'allowlist',
    credentials: preset.credentials,
    ...(preset.allowHosts.length > 0 ? { 'allow-hosts': preset.allowHosts.join('\n') } : {}),
    'proxy-image': DEFAULT_PROXY_IMAGE
  }
  return {
    read: (n) => given(n) ?? (n in policy ? undefined : values[n]),
    preset,
    ...(ownImage ? {} : { dockerfile })
  }
}
