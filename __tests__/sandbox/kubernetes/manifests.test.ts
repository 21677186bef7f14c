// The mapping ContainerSpec → Kubernetes manifests: every manifest validates against Kubernetes'
// own schemas (kubernetes-models), and each rule of the security model is a check that fails when
// the manifest misses that one field.
import { Pod } from 'kubernetes-models/v1/Pod'
import { Service } from 'kubernetes-models/v1/Service'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type { IPod } from 'kubernetes-models/v1'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { fixturePlan } from '../../../__fixtures__/plan.js'
import { LABELS } from '../../../src/labels.js'
import { containerSpec } from '../../../src/sandbox/spec.js'
import type { SidecarSpec } from '../../../src/sandbox/types.js'
import {
  COPY_IN,
  COPY_OUT,
  copiedMounts,
  denyAllPolicy,
  networkPolicy,
  podManifest,
  serviceManifest
} from '../../../src/sandbox/kubernetes/manifests.js'
import type { PodTarget } from '../../../src/sandbox/kubernetes/manifests.js'
import { podViolations, policyViolations } from '../../../src/sandbox/kubernetes/hardening.js'
import { labelValue, networkLabel, objectName } from '../../../src/sandbox/kubernetes/names.js'

const IMAGE = `registry.example/agent@sha256:${'a'.repeat(64)}`
const plan = fixturePlan()
const agentPhase = plan.phases.find((p) => p.name === 'agent')
if (agentPhase === undefined) throw new Error('no agent phase')
const spec = containerSpec(plan, agentPhase, {
  imageId: IMAGE,
  workspaceDir: '/host/ws',
  taskFile: '/host/task.md',
  env: [{ name: 'FOO', value: 'bar=baz' }],
  outDir: '/host/out'
})
const target: PodTarget = {
  namespace: 'sandboxes',
  runtimeClassName: 'gvisor',
  deadlineSeconds: 1810,
  terminationGraceSeconds: 10,
  copySizeBytes: 4 * 1024 ** 3,
  hostAliases: []
}
const mounts = copiedMounts(spec, (s) => s.endsWith('.md'))
const pod = (): IPod => JSON.parse(JSON.stringify(podManifest(spec, target, mounts))) as IPod

function validate(model: { validate(): void }): void {
  model.validate()
}

test('the phase pod validates against Kubernetes schemas and keeps every rule', () => {
  const p = pod()
  expect(() => validate(new Pod(p))).not.toThrow()
  expect(podViolations(p)).toEqual([])
  expect(p.spec?.restartPolicy).toBe('Never')
  expect(p.spec?.runtimeClassName).toBe('gvisor')
  expect(p.spec?.activeDeadlineSeconds).toBe(1810)
  const main = p.spec?.containers[0]
  expect(main?.securityContext).toMatchObject({
    runAsUser: 1000,
    runAsGroup: 1000,
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' }
  })
  expect(main?.resources?.limits).toEqual({ memory: String(2 * 1024 ** 3), cpu: '2000m' })
  expect(main?.env).toContainEqual({ name: 'FOO', value: 'bar=baz' })
  // The scratch folder: memory-backed, bounded.
  expect(p.spec?.volumes).toContainEqual({
    name: 'scratch-0',
    emptyDir: { medium: 'Memory', sizeLimit: String(256 * 1024 * 1024) }
  })
  // Host folders are copied: an init container unpacks them; a helper stays for the read-back.
  expect(p.spec?.initContainers?.map((c) => c.name)).toEqual([COPY_IN])
  expect(p.spec?.containers.map((c) => c.name)).toEqual(['main', COPY_OUT])
  expect(main?.volumeMounts).toContainEqual({
    name: 'io-1',
    mountPath: '/airlock/task.md',
    readOnly: true,
    subPath: 'task.md'
  })
  expect(p.metadata?.labels?.[LABELS.runId]).toBe('r1')
})

test('the cluster default runtime leaves runtimeClassName out', () => {
  const p = podManifest(spec, { ...target, runtimeClassName: null }, mounts)
  expect(p.spec?.runtimeClassName).toBeUndefined()
  expect(() => validate(new Pod(p))).not.toThrow()
})

test('a pod without copied folders has no helper containers', () => {
  const p = podManifest(spec, target, [])
  expect(p.spec?.initContainers).toBeUndefined()
  expect(p.spec?.containers).toHaveLength(1)
  expect(podViolations(p)).toEqual([])
})

test('a root or non-numeric user is refused by the mapping', () => {
  expect(() => podManifest({ ...spec, user: '0:0' }, target, [])).toThrow(/non-root/)
  expect(() => podManifest({ ...spec, user: 'agent' }, target, [])).toThrow(/numeric/)
})

type Mutation = [string, (p: IPod) => void, RegExp]
const main = (p: IPod) => p.spec!.containers[0]
const init = (p: IPod) => p.spec!.initContainers![0]
const mutations: Mutation[] = [
  ['restartPolicy', (p) => (p.spec!.restartPolicy = 'OnFailure'), /restartPolicy must be Never/],
  [
    'service-account token',
    (p) => delete p.spec!.automountServiceAccountToken,
    /automountServiceAccountToken/
  ],
  ['service links', (p) => delete p.spec!.enableServiceLinks, /enableServiceLinks/],
  ['host network', (p) => (p.spec!.hostNetwork = true), /hostNetwork/],
  ['host PID', (p) => delete p.spec!.hostPID, /hostPID/],
  ['host IPC', (p) => (p.spec!.hostIPC = true), /hostIPC/],
  [
    'shared process namespace',
    (p) => (p.spec!.shareProcessNamespace = true),
    /shareProcessNamespace/
  ],
  ['deadline', (p) => delete p.spec!.activeDeadlineSeconds, /activeDeadlineSeconds/],
  [
    'pod non-root',
    (p) => delete p.spec!.securityContext!.runAsNonRoot,
    /spec.securityContext.runAsNonRoot/
  ],
  [
    'pod seccomp',
    (p) => delete p.spec!.securityContext!.seccompProfile,
    /spec.securityContext.seccompProfile/
  ],
  ['run label', (p) => delete p.metadata!.labels![LABELS.runId], /run-id/],
  ['managed label', (p) => delete p.metadata!.labels![LABELS.managed], /managed/],
  [
    'hostPath volume',
    (p) => p.spec!.volumes!.push({ name: 'h', hostPath: { path: '/' } }),
    /must be an emptyDir/
  ],
  ['unbounded emptyDir', (p) => delete p.spec!.volumes![0].emptyDir!.sizeLimit, /sizeLimit/],
  [
    'container non-root',
    (p) => delete main(p).securityContext!.runAsNonRoot,
    /containers main: securityContext.runAsNonRoot/
  ],
  ['root uid', (p) => (main(p).securityContext!.runAsUser = 0), /runAsUser must be a non-root uid/],
  ['privileged', (p) => (main(p).securityContext!.privileged = true), /privileged must be false/],
  [
    'privilege escalation',
    (p) => delete main(p).securityContext!.allowPrivilegeEscalation,
    /allowPrivilegeEscalation/
  ],
  [
    'read-only root',
    (p) => (main(p).securityContext!.readOnlyRootFilesystem = false),
    /readOnlyRootFilesystem/
  ],
  [
    'drop ALL',
    (p) => (main(p).securityContext!.capabilities = { drop: ['NET_RAW'] }),
    /drop must contain ALL/
  ],
  [
    'added capability',
    (p) => (main(p).securityContext!.capabilities!.add = ['SYS_ADMIN']),
    /add must be empty/
  ],
  [
    'container seccomp',
    (p) => (main(p).securityContext!.seccompProfile = { type: 'Unconfined' }),
    /containers main: securityContext.seccompProfile/
  ],
  ['unmasked proc', (p) => (main(p).securityContext!.procMount = 'Unmasked'), /procMount/],
  ['memory limit', (p) => delete main(p).resources!.limits!.memory, /limits.memory/],
  ['cpu limit', (p) => delete main(p).resources!.limits!.cpu, /limits.cpu/],
  ['unpinned image', (p) => (main(p).image = 'registry.example/agent:latest'), /pinned by digest/],
  ['hostPort', (p) => (main(p).ports = [{ containerPort: 80, hostPort: 80 }]), /hostPort/],
  [
    'mount propagation',
    (p) => (main(p).volumeMounts![0].mountPropagation = 'Bidirectional'),
    /propagate/
  ],
  [
    'init container hardening',
    (p) => delete init(p).securityContext!.readOnlyRootFilesystem,
    /initContainers copy-in: securityContext.readOnlyRootFilesystem/
  ],
  [
    'ephemeral containers',
    (p) => (p.spec!.ephemeralContainers = [{ name: 'e', image: IMAGE }]),
    /ephemeralContainers/
  ]
]

test.each(mutations)(
  'a pod that breaks the rule "%s" fails the check',
  (_name, mutate, message) => {
    const p = pod()
    mutate(p)
    const violations = podViolations(p)
    expect(violations.some((v) => message.test(v))).toBe(true)
  }
)

const runLabel = labelValue('r1')

test('the deny-all policy and the internal network policy validate and keep the rules', () => {
  const deny = denyAllPolicy('r1', 'sandboxes', plan.labels)
  const internal = networkPolicy(
    { name: 'airlock-r1-internal', labels: plan.labels, internal: true },
    'r1',
    'sandboxes'
  )
  const upstream = networkPolicy(
    { name: 'airlock-r1-upstream', labels: plan.labels, internal: false },
    'r1',
    'sandboxes'
  )
  for (const p of [deny, internal, upstream]) {
    expect(() => validate(new NetworkPolicy(p))).not.toThrow()
    expect(policyViolations(p, runLabel)).toEqual([])
  }
  expect(deny.spec).toMatchObject({ policyTypes: ['Ingress', 'Egress'], ingress: [], egress: [] })
  const member = {
    matchLabels: { [LABELS.runId]: 'r1', [networkLabel('airlock-r1-internal')]: 'member' }
  }
  expect(internal.spec?.ingress).toEqual([{ from: [{ podSelector: member }] }])
  expect(internal.spec?.egress).toEqual([{ to: [{ podSelector: member }] }])
  expect(upstream.spec?.ingress).toEqual([])
})

type PolicyMutation = [string, (p: INetworkPolicy) => void, RegExp]
const policyMutations: PolicyMutation[] = [
  ['selects other pods', (p) => (p.spec!.podSelector = {}), /select the run's pods/],
  ['egress unrestricted', (p) => (p.spec!.policyTypes = ['Ingress']), /policyTypes/],
  ['ingress from anyone', (p) => (p.spec!.ingress = [{}]), /admits everyone/],
  [
    'ingress from an address',
    (p) => (p.spec!.ingress = [{ from: [{ ipBlock: { cidr: '0.0.0.0/0' } }] }]),
    /only from the run's pods/
  ],
  [
    'ingress from another namespace',
    (p) => (p.spec!.ingress = [{ from: [{ namespaceSelector: {} }] }]),
    /only from the run's pods/
  ],
  ['egress to everything', (p) => (p.spec!.egress = [{}]), /lets everything out/],
  [
    'egress to other pods',
    (p) => (p.spec!.egress = [{ to: [{ podSelector: {} }] }]),
    /egress podSelector/
  ],
  [
    'egress to another namespace',
    (p) => (p.spec!.egress = [{ to: [{ namespaceSelector: {} }] }]),
    /other namespaces/
  ]
]

test.each(policyMutations)('a policy that %s fails the check', (_name, mutate, message) => {
  const p = JSON.parse(
    JSON.stringify(
      networkPolicy(
        { name: 'airlock-r1-internal', labels: plan.labels, internal: true },
        'r1',
        'sandboxes'
      )
    )
  ) as INetworkPolicy
  mutate(p)
  expect(policyViolations(p, runLabel).some((v) => message.test(v))).toBe(true)
})

test('a sidecar pod joins its networks by label and gets a headless Service per name', () => {
  const proxy: SidecarSpec = {
    name: 'airlock-r1-proxy',
    image: `node@sha256:${'b'.repeat(64)}`,
    command: ['node', '/airlock/proxy.js'],
    user: '65534:65534',
    workdir: '/',
    env: ['NODE_ENV=production'],
    labels: { ...plan.labels, [LABELS.phase]: 'egress' },
    network: { name: 'airlock-r1-upstream' },
    networks: [{ name: 'airlock-r1-internal', aliases: ['airlock-proxy'] }],
    stdin: true,
    limits: { memoryBytes: 256 * 1024 * 1024, cpus: 1, pidsLimit: 64 },
    tmpfs: { '/tmp': 16 * 1024 * 1024 },
    mounts: [{ source: '/host/proxy.cjs', target: '/airlock/proxy.js', readOnly: true }]
  }
  const p = podManifest(
    proxy,
    target,
    copiedMounts(proxy, () => true)
  )
  expect(() => validate(new Pod(p))).not.toThrow()
  expect(podViolations(p)).toEqual([])
  expect(p.metadata?.labels?.[networkLabel('airlock-r1-internal')]).toBe('member')
  expect(p.metadata?.labels?.[networkLabel('airlock-r1-upstream')]).toBe('member')
  expect(p.spec?.containers[0].stdin).toBe(true)
  // Only read-only copies: nothing to read back, no helper that stays.
  expect(p.spec?.containers).toHaveLength(1)
  const svc = serviceManifest(proxy, 'airlock-r1-internal', 'airlock-proxy', 'sandboxes')
  expect(() => validate(new Service(svc))).not.toThrow()
  expect(svc.spec).toMatchObject({
    clusterIP: 'None',
    selector: { 'dev.airlock.pod': 'airlock-r1-proxy' }
  })
})

test.each([
  ['airlock-r1-agent', 'airlock-r1-agent'],
  ['airlock-R1_x-agent', /^airlock-r1-x-agent-[a-f0-9]{12}$/],
  ['a'.repeat(80), /^a{50}-[a-f0-9]{12}$/]
])('object name of %s', (name, expected) => {
  const got = objectName(name)
  if (typeof expected === 'string') expect(got).toBe(expected)
  else expect(got).toMatch(expected)
  expect(got.length).toBeLessThanOrEqual(63)
})

test('label values Kubernetes refuses become a stable hash', () => {
  expect(labelValue('r1')).toBe('r1')
  const long = labelValue('x'.repeat(64))
  expect(long).toMatch(/^h-[a-f0-9]{40}$/)
  expect(labelValue('x'.repeat(64))).toBe(long)
  expect(labelValue('ends-')).toMatch(/^h-/)
})

test('the schema check can fail: a manifest with a wrong type is refused', () => {
  const p = pod()
  ;(p.spec!.containers[0].securityContext as Record<string, unknown>).runAsUser = 'root'
  expect(() => validate(new Pod(p))).toThrow(/runAsUser must be integer/)
})
