// Generates docs/CONFIGURATION.md from action.yml: every input and output with its description,
// whether it is required, and its default. `--check` fails (exit 1) when the file is out of date.
// Usage: node scripts/gen-config-doc.mjs [--check] [--action action.yml] [--out docs/CONFIGURATION.md]
import { readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import * as prettier from 'prettier'
import YAML from 'yaml'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const { values } = parseArgs({
  options: {
    check: { type: 'boolean' },
    action: { type: 'string', default: resolve(root, 'action.yml') },
    out: { type: 'string', default: resolve(root, 'docs/CONFIGURATION.md') }
  }
})

/** Table cells: one line, pipes escaped. */
const cell = (text) =>
  String(text ?? '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim()

export function render(action) {
  const inputs = Object.entries(action.inputs ?? {})
  const outputs = Object.entries(action.outputs ?? {})
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from action.yml by `node scripts/gen-config-doc.mjs`; do not edit by hand. -->',
    '',
    'Every input of the action is also a flag of the CLI (`--name`). Settings marked in',
    "[POLICY.md](POLICY.md) can also come from the repository's `.github/airlock.yml`, read from the",
    "pull request's base commit; an input given explicitly overrides the file.",
    '',
    `## Inputs (${inputs.length})`,
    '',
    '| Input | Required | Default | Description |',
    '| --- | --- | --- | --- |'
  ]
  for (const [name, spec] of inputs) {
    const def = spec.default === undefined ? '' : `\`${cell(spec.default)}\``
    lines.push(
      `| \`${name}\` | ${spec.required ? 'yes' : 'no'} | ${def} | ${cell(spec.description)} |`
    )
  }
  lines.push('', `## Outputs (${outputs.length})`, '', '| Output | Description |', '| --- | --- |')
  for (const [name, spec] of outputs) lines.push(`| \`${name}\` | ${cell(spec.description)} |`)
  lines.push('')
  return lines.join('\n')
}

const action = YAML.parse(await readFile(values.action, 'utf8'))
// Formatted as the repository's prettier check expects it.
const text = await prettier.format(render(action), {
  ...(await prettier.resolveConfig(values.out)),
  parser: 'markdown'
})
if (values.check) {
  const current = await readFile(values.out, 'utf8').catch(() => '')
  if (current !== text) {
    console.error(
      `${values.out} is out of date with ${values.action}; run: node scripts/gen-config-doc.mjs`
    )
    process.exit(1)
  }
} else {
  await writeFile(values.out, text)
  console.error(`wrote ${values.out}`)
}
