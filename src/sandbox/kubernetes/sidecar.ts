// A sidecar on the cluster: a pod with a headless Service per name it answers to, attached for
// its output (and input), its address told to the phase pods that come after it.
import { PassThrough } from 'node:stream'
import { Attach } from '@kubernetes/client-node'
import type { CoreV1Api, KubeConfig, V1Service } from '@kubernetes/client-node'
import { errorMessage } from '../../errors.js'
import type { Sidecar, SidecarSpec } from '../types.js'
import { ignoreMissing, runOf, typed } from './api-calls.js'
import type { Socket } from './api-calls.js'
import { MAIN, networksOf, serviceManifest } from './manifests.js'
import type { PodMaker } from './phase.js'
import { describe } from './pod-lifecycle.js'
import { delay } from './pods.js'

/** A sidecar's address and the names it answers to on one network. */
export interface Peer {
  ip: string
  aliases: string[]
}

/** What a sidecar needs of the runtime. */
export interface SidecarContext extends PodMaker {
  kc: KubeConfig
  core: CoreV1Api
  ns: string
  /** The names sidecars answer to, by network (written to the phase pods' /etc/hosts). */
  peers: Map<string, Peer[]>
}

/** Starts a sidecar (the runtime's startSidecar). */
export async function startSidecar(cx: SidecarContext, spec: SidecarSpec): Promise<Sidecar> {
  const runId = runOf(spec.labels)
  await cx.guard(runId, spec.labels)
  const pod = await cx.createPod(spec, 24 * 3600, 2)
  const services: string[] = []
  try {
    const state = await pod.copyIn()
    if (state.kind !== 'running') throw new Error(describe(state))
    const ip = state.ip
    if (ip === undefined) throw new Error('the sidecar pod has no address')
    for (const n of networksOf(spec)) {
      for (const alias of n.aliases) {
        const svc = serviceManifest(spec, n.name, alias, cx.ns)
        await cx.core.createNamespacedService({
          namespace: cx.ns,
          body: typed<V1Service>(svc, 'V1Service')
        })
        services.push(svc.metadata?.name ?? '')
      }
      if (n.aliases.length > 0) {
        const list = cx.peers.get(n.name) ?? []
        list.push({ ip, aliases: n.aliases })
        cx.peers.set(n.name, list)
      }
    }
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const stdin = new PassThrough()
    const ws = (await new Attach(cx.kc).attach(
      cx.ns,
      pod.name,
      MAIN,
      stdout,
      stderr,
      spec.stdin === true ? stdin : null,
      false
    )) as unknown as Socket
    const exited = pod
      .follow((s) => s.kind === 'exited' || s.kind === 'failed')
      .then((s) =>
        s.kind === 'exited' ? { exitCode: s.exitCode } : { exitCode: null, error: describe(s) }
      )
      .catch((e: unknown) => ({ exitCode: null, error: errorMessage(e) }))
    return {
      stdout,
      stderr,
      exited,
      input: (data) => stdin.end(data),
      address: async () => {
        const s = await pod.lastState()
        return s.kind === 'running' ? s.ip : undefined
      },
      stop: async (graceMs) => {
        for (const list of cx.peers.values()) {
          const i = list.findIndex((p) => p.ip === ip)
          if (i >= 0) list.splice(i, 1)
        }
        await pod.remove(Math.ceil(graceMs / 1000))
        await Promise.race([exited, delay(graceMs + 5000)])
        ws.close()
        stdout.end()
        stderr.end()
        for (const s of services)
          await cx.core.deleteNamespacedService({ name: s, namespace: cx.ns }).catch(ignoreMissing)
      }
    }
  } catch (error) {
    await pod.remove(0).catch(() => undefined)
    for (const s of services)
      await cx.core.deleteNamespacedService({ name: s, namespace: cx.ns }).catch(ignoreMissing)
    throw error
  }
}
