// What run mode reads, on top of the raw inputs: the pull request's head as the default `ref`,
// and an agent preset's defaults (explicit inputs and the policy file's settings still win).
import * as fs from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ConfigurationError } from '../errors.js'
import type { RunEvent } from '../event.js'
import { INPUT } from '../input-names.js'
import { runRef } from '../workspace/event-ref.js'
import { forkHead } from '../workspace/fork-head.js'
import { withPreset } from './presets.js'
import type { PublishedImage } from './published.js'
import { publishedImageFor, readPublished } from './published.js'

/** The action's own folder: the bundle runs from dist/, the sources from src/presets/. */
export function actionRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  return fs.existsSync(path.join(here, '..', 'images', 'agents'))
    ? path.resolve(here, '..')
    : path.resolve(here, '..', '..')
}

export async function runInputs(
  given: (name: string) => string | undefined,
  options: {
    workspace: string
    env: NodeJS.ProcessEnv
    /** The run's event (src/event.ts): the pull request's head and whether it is a fork. */
    event: RunEvent
    root?: string
    /** The policy file's settings (above the preset's defaults). */
    policy?: Readonly<Record<string, string>>
  }
): Promise<{
  read: (name: string) => string | undefined
  context: { preset?: { name: string; dockerfile?: string; published?: PublishedImage } }
}> {
  const { env } = options
  const repoPath = path.resolve(options.workspace, given(INPUT.path) ?? '.')
  const ref = await runRef({
    given: given(INPUT.ref),
    repoPath,
    headSha: options.event.pullRequest?.headSha
  })
  const withRef = (name: string): string | undefined => (name === 'ref' ? ref : given(name))
  const root = options.root ?? actionRoot()
  const p = withPreset(withRef, {
    actionRoot: root,
    environment: env,
    ...(options.policy !== undefined ? { policy: options.policy } : {}),
    forkPullRequest: options.event.pullRequest?.fork === true
  })
  // The caller's own Dockerfile, and any build context, are read from the checkout, the commit the
  // run works on: on a fork's pull request head they are the fork's, and the runner's engine would
  // build them outside the sandbox (a preset's own Dockerfile would COPY the fork's files).
  const dockerfile = p.read(INPUT.dockerfile)
  const customDockerfile = dockerfile !== undefined && dockerfile !== p.dockerfile
  const buildContext = p.read(INPUT.buildContext)
  if (customDockerfile || buildContext !== undefined) {
    const why = await forkHead({ event: options.event, ref: ref ?? given(INPUT.ref), repoPath })
    if (why !== undefined) {
      const input = customDockerfile ? INPUT.dockerfile : INPUT.buildContext
      throw new ConfigurationError(
        input,
        `${why}; an image is never built from a fork's head (the runner's container engine would run its build steps, or copy its files, outside the sandbox). Use an agent preset (\`agent: claude-code\`, \`codex\`, \`gemini-cli\`) without \`build-context\`, or a digest-pinned \`image: name@sha256:...\` built from your default branch instead`
      )
    }
  }
  // The image the release published for the preset (images/published.json), when the run uses
  // the preset's own Dockerfile: the plan then pulls it by digest instead of building it.
  const published =
    p.preset !== undefined && p.dockerfile !== undefined
      ? publishedImageFor(readPublished(root), p.preset.name)
      : undefined
  return {
    read: p.read,
    context:
      p.preset === undefined
        ? {}
        : {
            preset: {
              name: p.preset.name,
              ...(p.dockerfile !== undefined ? { dockerfile: p.dockerfile } : {}),
              ...(published !== undefined ? { published } : {})
            }
          }
  }
}
