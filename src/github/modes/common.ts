// What the modes share: their client and writes, and the record of a dry run.
import * as fs from 'node:fs'
import * as path from 'node:path'
import type { Logger } from '../../log.js'
import { codeBlock } from '../../report/escape.js'
import { DRY_RUN_FILE } from '../../report/provenance.js'
import { createClient } from '../client/client.js'
import type { GitHubClient } from '../client/client.js'
import { writeSummary } from '../client/run-outputs.js'
import { Writes } from '../client/writes.js'
import type { WriteCall } from '../client/writes.js'
import type { GitHubInputs, ModeEnv } from './inputs.js'

/** The mode's client (read-only in a dry run) and the writes it sends (or records). */
export function connect(
  inputs: GitHubInputs,
  env: ModeEnv,
  log: Logger,
  readOnly = inputs.dryRun
): { octokit: GitHubClient; writes: Writes } {
  const octokit = createClient({
    token: inputs.token,
    log,
    readOnly,
    ...(env.event.apiUrl !== undefined ? { baseUrl: env.event.apiUrl } : {})
  })
  return { octokit, writes: new Writes(octokit, inputs.dryRun) }
}

/** The dry run's record: every write with its exact payload, in the output folder and the summary. */
export async function reportDryRun(
  env: ModeEnv,
  outputDir: string,
  mode: string,
  calls: WriteCall[],
  extra: Record<string, unknown> = {}
): Promise<void> {
  await fs.promises.mkdir(outputDir, { recursive: true })
  const record = { mode, dryRun: true, writes: calls, ...extra }
  await fs.promises.writeFile(
    path.join(outputDir, DRY_RUN_FILE),
    JSON.stringify(record, null, 2) + '\n'
  )
  await writeSummary(env.runner, (summary) => {
    summary.addHeading(`Agent Airlock ${mode}: dry run (nothing was sent)`, 3)
    if (calls.length === 0) summary.addRaw('No write would be made.\n\n')
    for (const c of calls) {
      const { body, ...rest } = c.params
      summary.addRaw(`**${c.route}**\n\n${codeBlock(JSON.stringify(rest, null, 2), 'json')}\n\n`)
      if (typeof body === 'string') {
        summary.addRaw(`<details><summary>body</summary>\n\n${body}\n\n</details>\n\n`)
      }
    }
  })
}
