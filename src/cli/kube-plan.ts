// The Kubernetes part of `airlock plan --json`: the manifests for the plan, in the namespace the
// run would use.
import type { RunPlan } from '../plan.js'
import { kubeNamespace, loadKubeConfig } from '../sandbox/kubernetes/index.js'
import { plannedManifests } from '../sandbox/kubernetes/plan-manifests.js'
import type { PlannedManifests } from '../sandbox/kubernetes/plan-manifests.js'

export function kubePlan(plan: RunPlan): PlannedManifests | { refused: string } {
  let namespace = plan.engine?.namespace ?? null
  if (namespace === null) {
    try {
      namespace = kubeNamespace(loadKubeConfig(), null)
    } catch {
      namespace = 'default'
    }
  }
  return plannedManifests(plan, namespace)
}
