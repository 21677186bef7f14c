import { artifactLine } from '../../src/github/client/artifact-line.js'

describe('artifactLine', () => {
  const run = 'https://github.com/octo/repo/actions/runs/31'

  it('links the uploaded artifact', () => {
    const line = artifactLine(
      {
        status: 'uploaded',
        name: 'airlock-31-1',
        id: 7,
        url: `${run}/artifacts/7`,
        size: 10,
        digest: null,
        attempts: 1
      },
      run
    )
    expect(line).toBe(
      `📦 **Evidence:** artifact [\`airlock-31-1\`](${run}/artifacts/7) (report.json, diff.patch, logs)`
    )
  })

  it('says plainly that a failed upload left the artifacts missing', () => {
    const line = artifactLine(
      { status: 'failed', name: 'a', error: 'HTTP 403 <b>@octocat</b>', attempts: 3 },
      run
    )
    expect(line).toMatch(/The evidence artifact is missing/)
    expect(line).not.toContain('<b>')
    expect(line).not.toMatch(/@octocat/)
  })

  it('points at the run when the artifact id is unknown, and never links a foreign scheme', () => {
    expect(artifactLine(null, run)).toBe(`📦 **Evidence:** the artifacts of [the run](${run})`)
    expect(artifactLine(null, 'javascript:alert(1)')).toBe(
      '📦 **Evidence:** the artifacts of the run'
    )
    expect(artifactLine(null, undefined)).toBeNull()
  })
})
