// What `airlock plan --engine kubernetes --json` prints: the manifests the backend would send for
// the plan, made by the same functions the backend uses (pure). Only what the cluster decides at
// run time is not in them: the pods' addresses (the proxy's, in the agent pod's hostAliases).

import type { RunPlan } from '../../plan.js'
import { containerSpec } from '../spec.js'
import { PINNED_IMAGE } from './hardening.js'
import { copiedMounts, denyAllPolicy, networkPolicy, podManifest } from './manifests.js'
import { runtimeClassOf } from './runtime-classes.js'

const TASK = '/run/task.md'

export interface PlannedManifests {
  namespace: string
  /** In the order the backend sends them. */
  manifests: object[]
  /** What is decided only when the run starts. */
  atRunTime: string[]
}

export function plannedManifests(
  plan: RunPlan,
  namespace: string
): PlannedManifests | { refused: string } {
  if (plan.image.kind !== 'pinned' || !PINNED_IMAGE.test(plan.image.ref)) {
    return {
      refused:
        'engine: kubernetes builds no image: give image: name@sha256:<digest> (built and pushed elsewhere)'
    }
  }
  const image = plan.image.ref
  const manifests: object[] = [denyAllPolicy(plan.runId, namespace, plan.labels)]
  const atRunTime: string[] = []
  const internal = `airlock-${plan.runId}-internal`
  if (plan.phases.some((p) => p.network === 'allowlist')) {
    manifests.push(
      networkPolicy({ name: internal, labels: plan.labels, internal: true }, plan.runId, namespace)
    )
    manifests.push(
      networkPolicy(
        { name: `airlock-${plan.runId}-upstream`, labels: plan.labels, internal: false },
        plan.runId,
        namespace
      )
    )
    atRunTime.push(
      "the egress proxy's pod and Service, and its address in the agent pod's hostAliases"
    )
  }
  if (plan.services.length > 0)
    atRunTime.push("the services' pods, Services and policies of each test phase")
  for (const phase of plan.phases) {
    const spec = containerSpec(plan, phase, {
      imageId: image,
      workspaceDir: '/run/workspace',
      taskFile: TASK,
      env: plan.env.map((name) => ({ name, value: '<from the runner>' })),
      ...(phase.name === 'agent' ? { outDir: '/run/out' } : {}),
      ...(phase.network === 'allowlist'
        ? { egress: { network: internal, env: ['<proxy variables>'] } }
        : {})
    })
    const graceSeconds = Math.max(1, Math.ceil(phase.graceMs / 1000))
    manifests.push(
      podManifest(
        spec,
        {
          namespace,
          runtimeClassName: runtimeClassOf(plan.sandbox.runtime),
          deadlineSeconds: Math.ceil(phase.timeoutMs / 1000) + graceSeconds,
          terminationGraceSeconds: graceSeconds,
          copySizeBytes: plan.sandbox.workspace.sizeBytes,
          hostAliases: []
        },
        copiedMounts(spec, (source) => source === TASK)
      )
    )
  }
  return { namespace, manifests, atRunTime }
}
