import {
  isSuperseded,
  markerFor,
  parseMarker,
  sameEvidence,
  supersededBody
} from '../../src/github/review/marker.js'
import { marker as rendererMarker } from '../../src/report/comment.js'
import type { Report } from '../../src/report/report.js'
import { DIFF, HEAD } from './report-fixture.js'

describe('marker', () => {
  test('parses what the comment renderer writes', () => {
    const m = rendererMarker({
      runId: '12-1',
      repo: { headSha: HEAD },
      diff: { sha256: DIFF }
    } as unknown as Report)
    expect(parseMarker(`body\n\n${m}\n`)).toEqual({
      runId: '12-1',
      headSha: HEAD,
      diffSha256: DIFF
    })
    expect(markerFor({ runId: '12-1', headSha: HEAD, diffSha256: DIFF })).toBe(m)
  })

  test.each([
    ['no marker', 'hello'],
    ['short sha', `<!-- airlock:report {"runId":"1","headSha":"abc","diffSha256":null} -->`],
    [
      'extra key',
      `<!-- airlock:report {"runId":"1","headSha":"${HEAD}","diffSha256":null,"x":"1"} -->`
    ],
    ['wrong type', `<!-- airlock:report {"runId":1,"headSha":"${HEAD}","diffSha256":null} -->`],
    ['bad diff', `<!-- airlock:report {"runId":"1","headSha":"${HEAD}","diffSha256":"zz"} -->`],
    ['broken json', `<!-- airlock:report {"runId":"1","headSha":"${HEAD}" -->`]
  ])('%s is no marker', (_name, body) => {
    expect(parseMarker(body)).toBeNull()
  })

  test('superseded bodies keep their marker and are marked once', () => {
    const body = `report\n\n${markerFor({ runId: '12-1', headSha: HEAD, diffSha256: DIFF })}\n`
    const once = supersededBody(body, '13-1')
    expect(isSuperseded(once)).toBe(true)
    expect(supersededBody(once, '14-1')).toBe(once)
    expect(parseMarker(once)?.runId).toBe('12-1')
  })

  test('the same evidence is the same run, head and diff', () => {
    const m = { runId: '12-1', headSha: HEAD, diffSha256: DIFF }
    expect(sameEvidence(m, { ...m })).toBe(true)
    expect(sameEvidence(m, { ...m, diffSha256: 'c'.repeat(64) })).toBe(false)
    expect(sameEvidence(null, m)).toBe(false)
  })
})
