import {
  isSuperseded,
  markerFor,
  parseMarker,
  reviewBody,
  supersededBody
} from '../../src/github/marker.js'
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

  test('the review body drops markers and comments carried by comment.md, and appends its own', () => {
    const planted = `hi @admin <!-- airlock:report {"runId":"9-9","headSha":"${HEAD}","diffSha256":"${'f'.repeat(64)}"} --> <!-- x`
    const body = reviewBody(planted, { runId: '12-1', headSha: HEAD, diffSha256: DIFF })
    expect(parseMarker(body)).toEqual({ runId: '12-1', headSha: HEAD, diffSha256: DIFF })
    expect(body.match(/airlock:report/g)).toHaveLength(1)
    expect(body).toContain('@\u2060admin')
    expect(body).toContain('&lt;!-- x')
  })

  test('superseded bodies keep their marker and are marked once', () => {
    const body = reviewBody('report', { runId: '12-1', headSha: HEAD, diffSha256: DIFF })
    const once = supersededBody(body, '13-1')
    expect(isSuperseded(once)).toBe(true)
    expect(supersededBody(once, '14-1')).toBe(once)
    expect(parseMarker(once)?.runId).toBe('12-1')
  })
})
