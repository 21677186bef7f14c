// One pod of the run and what happens to it: the host folders copied in, its state followed, its
// output streamed, the writable folders read back, its removal.
import { PassThrough } from 'node:stream'
import type { Writable } from 'node:stream'
import { Attach, Exec, Log } from '@kubernetes/client-node'
import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node'
import type { MountSpec } from '../types.js'
import { status } from './api-calls.js'
import type { Socket } from './api-calls.js'
import { packMounts, unpackInto } from './copy.js'
import type { KubernetesOptions } from './kubeconfig.js'
import { COPY_IN, COPY_OUT, IO_ROOT, MAIN } from './manifests.js'
import type { CopiedMount } from './manifests.js'
import { delay, followPod, podState } from './pods.js'
import type { PodState } from './pods.js'

/** One pod of the run: copy in, follow, logs, read back, remove. */
export class Pod {
  private removed = false

  constructor(
    private readonly kc: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly ns: string,
    readonly name: string,
    private readonly hostMounts: MountSpec[],
    private readonly mounts: CopiedMount[],
    private readonly options: KubernetesOptions
  ) {}

  async read(): Promise<V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ name: this.name, namespace: this.ns })
    } catch (error) {
      if (status(error) === 404) return undefined
      throw error
    }
  }

  follow(until: (s: PodState) => boolean, signal?: AbortSignal): Promise<PodState> {
    return followPod(this.kc, () => this.read(), this.ns, this.name, until, signal)
  }

  async lastState(): Promise<PodState> {
    return podState(await this.read())
  }

  /** Streams the host folders into the init container, then waits for the phase to start. */
  async copyIn(signal?: AbortSignal): Promise<PodState> {
    if (this.mounts.length > 0) {
      const s = await this.follow((x) => x.kind !== 'pending', signal)
      if (s.kind === 'copy-in') {
        const stdin = packMounts(this.hostMounts, this.mounts)
        const ws = (await new Attach(this.kc).attach(
          this.ns,
          this.name,
          COPY_IN,
          null,
          null,
          stdin,
          false
        )) as unknown as Socket
        const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()))
        await this.follow((x) => x.kind !== 'pending' && x.kind !== 'copy-in', signal)
        ws.close()
        await Promise.race([closed, delay(1000)])
      }
    }
    return this.follow((x) => x.kind !== 'pending' && x.kind !== 'copy-in', signal)
  }

  /** Follows the phase container's output into `out` until it ends (never ends `out`). */
  async logs(out: Writable): Promise<void> {
    const pass = new PassThrough()
    pass.on('data', (c: Buffer) => out.write(c))
    const ended = new Promise<void>((resolve) => {
      pass.on('end', resolve)
      pass.on('error', () => resolve())
    })
    await new Log(this.kc).log(this.ns, this.name, MAIN, pass, { follow: true })
    await ended
  }

  /** Reads each writable folder back from the helper that stays, into its host folder. */
  async readBack(): Promise<void> {
    const limits = this.options.readBack ?? {
      maxBytes: this.options.copySizeBytes,
      maxEntries: 200_000
    }
    for (const m of this.mounts) {
      if (m.readOnly) continue
      const out = new PassThrough()
      const stderr = new PassThrough()
      let errText = ''
      stderr.on('data', (c: Buffer) => (errText += c.toString('utf8').slice(0, 2000)))
      let exit: { status?: string; message?: string } | undefined
      const unpacked = unpackInto(out, this.hostMounts[m.index].source, limits)
      await new Exec(this.kc).exec(
        this.ns,
        this.name,
        COPY_OUT,
        ['tar', '-c', '-f', '-', '-C', `${IO_ROOT}/${m.index}`, '.'],
        out,
        stderr,
        null,
        false,
        (s) => (exit = s)
      )
      await unpacked
      if (exit?.status !== 'Success')
        throw new Error(`reading ${m.target} back failed: ${exit?.message ?? ''} ${errText}`.trim())
    }
  }

  async remove(graceSeconds: number): Promise<void> {
    if (this.removed && graceSeconds > 0) return
    try {
      await this.core.deleteNamespacedPod({
        name: this.name,
        namespace: this.ns,
        gracePeriodSeconds: graceSeconds
      })
    } catch (error) {
      if (status(error) !== 404) throw error
    }
    this.removed = true
    await this.follow((s) => s.kind === 'gone').catch(() => undefined)
  }
}

export function describe(state: PodState): string {
  if (state.kind === 'failed')
    return `the pod failed: ${state.reason}${state.message ? ` (${state.message})` : ''}`
  if (state.kind === 'gone') return 'the pod disappeared (deleted by someone else)'
  return `the pod is ${state.kind}`
}
