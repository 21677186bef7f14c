// The real-cluster tier: the shared Kubernetes tests against the cluster of a kubeconfig
// (a kind or k3s cluster with gVisor's RuntimeClass and a network plugin that enforces
// NetworkPolicy). Without AIRLOCK_TEST_KUBECONFIG it runs nothing and says so: the test is
// reported as skipped with the reason in its name, never as passed.
import { KubernetesRuntime, loadKubeConfig } from '../../../src/sandbox/kubernetes/index.js'
import { sharedSuite } from './shared-suite.js'

const kubeconfig = process.env.AIRLOCK_TEST_KUBECONFIG ?? ''
const image = process.env.AIRLOCK_TEST_KUBE_IMAGE ?? ''

if (kubeconfig === '' || image === '') {
  const why =
    'NOT RUN: no real cluster (set AIRLOCK_TEST_KUBECONFIG to a kubeconfig and AIRLOCK_TEST_KUBE_IMAGE to a busybox image pinned by digest the cluster can pull)'
  process.stderr.write(`kubernetes real-cluster tier: ${why}\n`)
  test.skip(`real cluster: ${why}`, () => undefined)
} else {
  describe('a real cluster', () => {
    sharedSuite({
      runtime: () =>
        new KubernetesRuntime(loadKubeConfig(kubeconfig), {
          namespace: process.env.AIRLOCK_TEST_KUBE_NAMESPACE ?? 'airlock-sandboxes',
          copySizeBytes: 64 * 1024 * 1024
        }),
      image,
      ociRuntime: process.env.AIRLOCK_TEST_KUBE_RUNTIME ?? 'runsc'
    })
  })
}
