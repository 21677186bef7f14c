// What run mode reads, on top of the raw inputs: the pull request's head as the default `ref`,
// and an agent preset's defaults (explicit inputs still win).
import * as fs from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runRef } from '../workspace/event-ref.js'
import { withPreset } from './presets.js'

/** The action's own folder: the bundle runs from dist/, the sources from src/presets/. */
export function actionRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  return fs.existsSync(path.join(here, '..', 'images', 'agents'))
    ? path.resolve(here, '..')
    : path.resolve(here, '..', '..')
}

function isForkPullRequest(eventPath: string | undefined): boolean {
  if (eventPath === undefined || eventPath === '') return false
  try {
    const e = JSON.parse(fs.readFileSync(eventPath, 'utf8')) as {
      pull_request?: {
        head?: { repo?: { full_name?: string } }
        base?: { repo?: { full_name?: string } }
      }
    }
    const head = e.pull_request?.head?.repo?.full_name
    return head !== undefined && head !== e.pull_request?.base?.repo?.full_name
  } catch {
    return false
  }
}

export async function runInputs(
  given: (name: string) => string | undefined,
  options: { workspace: string; env: NodeJS.ProcessEnv; root?: string; policyNetwork?: string }
): Promise<{
  read: (name: string) => string | undefined
  context: { preset?: { name: string; dockerfile?: string } }
}> {
  const { env } = options
  const ref = await runRef({
    given: given('ref'),
    repoPath: path.resolve(options.workspace, given('path') ?? '.'),
    eventName: env.GITHUB_EVENT_NAME,
    eventPath: env.GITHUB_EVENT_PATH,
    readFile: (p) => fs.readFileSync(p, 'utf8')
  })
  const withRef = (name: string): string | undefined => (name === 'ref' ? ref : given(name))
  const p = withPreset(withRef, {
    actionRoot: options.root ?? actionRoot(),
    environment: env,
    ...(options.policyNetwork !== undefined ? { policyNetwork: options.policyNetwork } : {}),
    forkPullRequest: isForkPullRequest(env.GITHUB_EVENT_PATH)
  })
  return {
    read: p.read,
    context:
      p.preset === undefined
        ? {}
        : {
            preset: {
              name: p.preset.name,
              ...(p.dockerfile !== undefined ? { dockerfile: p.dockerfile } : {})
            }
          }
  }
}
