// `engine` at the edge (auto decides from the runner's facts and says why), and the manifests the
// plan prints for engine kubernetes: the backend's own, valid and hardened.
import { Pod } from 'kubernetes-models/v1/Pod'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IPod } from 'kubernetes-models/v1'
import { fixturePlan } from '../../../__fixtures__/plan.js'
import { ConfigurationError } from '../../../src/errors.js'
import { engineFactsOf, readEngine } from '../../../src/inputs/engine.js'
import { plannedManifests } from '../../../src/sandbox/kubernetes/plan-manifests.js'
import { podViolations } from '../../../src/sandbox/kubernetes/hardening.js'

const reader = (v: Record<string, string>) => (n: string) => v[n]
const inCluster = { inCluster: true, dockerEngine: false }

test.each([
  [{}, { inCluster: true, dockerEngine: false }, 'docker', /engine: docker/],
  [
    { engine: 'kubernetes' },
    { inCluster: false, dockerEngine: true },
    'kubernetes',
    /engine: kubernetes/
  ],
  [{ engine: 'auto' }, inCluster, 'kubernetes', /in a Kubernetes cluster .* no Docker engine/],
  [{ engine: 'auto' }, { inCluster: true, dockerEngine: true }, 'docker', /has a Docker engine/],
  [
    { engine: 'auto' },
    { inCluster: false, dockerEngine: false },
    'docker',
    /not in a Kubernetes cluster/
  ]
])('engine %j with %j → %s', (values, facts, name, reason) => {
  const choice = readEngine(reader(values), facts)
  expect(choice.name).toBe(name)
  expect(choice.reason).toMatch(reason)
})

test('bad engine values name the input and the fix', () => {
  expect(() => readEngine(reader({ engine: 'podman' }), inCluster)).toThrow(ConfigurationError)
  expect(() => readEngine(reader({ engine: 'podman' }), inCluster)).toThrow(
    /engine: "podman" is not one of docker, kubernetes, auto/
  )
  expect(() =>
    readEngine(reader({ 'kubernetes-namespace': 'Bad_NS', engine: 'kubernetes' }), inCluster)
  ).toThrow(/kubernetes-namespace/)
  expect(() => readEngine(reader({ 'kubernetes-namespace': 'ns' }), inCluster)).toThrow(
    /applies to engine: kubernetes only/
  )
})

test('auto reads the cluster from KUBERNETES_SERVICE_HOST and the engine from DOCKER_HOST or the socket', () => {
  expect(engineFactsOf({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, () => false)).toEqual(inCluster)
  expect(engineFactsOf({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, () => true)).toEqual({
    inCluster: true,
    dockerEngine: true
  })
  expect(engineFactsOf({ DOCKER_HOST: 'tcp://x:2375' }, () => false)).toEqual({
    inCluster: false,
    dockerEngine: true
  })
})

test('the plan of engine kubernetes holds the manifests the backend sends, each valid and hardened', () => {
  const plan = fixturePlan({
    dockerfile: undefined,
    image: `registry.example/agent@sha256:${'c'.repeat(64)}`,
    testCommand: 'npm test',
    runtime: 'runsc'
  } as never)
  const planned = plannedManifests(plan, 'sandboxes')
  if ('refused' in planned) throw new Error(planned.refused)
  const pods = planned.manifests.filter((m) => (m as { kind: string }).kind === 'Pod') as IPod[]
  expect(pods.map((p) => p.metadata?.labels?.['dev.airlock.phase'])).toEqual(
    plan.phases.map((p) => p.name)
  )
  for (const p of pods) {
    expect(() => new Pod(p).validate()).not.toThrow()
    expect(podViolations(p)).toEqual([])
    expect(p.spec?.runtimeClassName).toBe('gvisor')
  }
  const policies = planned.manifests.filter((m) => (m as { kind: string }).kind === 'NetworkPolicy')
  expect(policies).toHaveLength(1)
  for (const p of policies) expect(() => new NetworkPolicy(p as never).validate()).not.toThrow()
})

test('a plan that builds its image is refused for engine kubernetes', () => {
  const planned = plannedManifests(fixturePlan(), 'sandboxes')
  expect(planned).toEqual({ refused: expect.stringMatching(/builds no image/) as unknown })
})
