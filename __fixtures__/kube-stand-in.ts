// A stand-in for the Kubernetes API server, on loopback, for the Kubernetes backend's tests. It
// answers exactly what the backend uses — pods (create, get, list, watch, delete, log, attach,
// exec), services, network policies, RuntimeClasses, API groups, version — validates every body
// against Kubernetes' own schemas (kubernetes-models) and every query parameter against the ones
// the API documents for the route, and RUNS the pods it is given on the local Docker engine, as a
// kubelet would: init containers in order, then the containers; the securityContext as Docker's
// settings; emptyDir volumes as host folders (memory-backed ones with a size as tmpfs when only
// one container mounts them); the network from the NetworkPolicies (a pod that no policy lets out
// gets no network; pods a policy lets reach each other share an internal network; a policy that
// lets a pod reach addresses joins it to `outside`). A pod selected by no policy, or every pod when
// `enforceNetworkPolicy` is false (a network plugin that ignores policies), joins one shared
// network. Images: `name@sha256:<hex>` names the local image whose ID is `sha256:<hex>` (the
// engine's store is the registry). Faults: a dropped watch, an eviction.
import * as fs from 'node:fs'
import * as http from 'node:http'
import * as os from 'node:os'
import * as path from 'node:path'
import { PassThrough } from 'node:stream'
import type { AddressInfo } from 'node:net'
import Docker from 'dockerode'
import { WebSocketServer } from 'ws'
import type { WebSocket } from 'ws'
import { Pod as PodModel } from 'kubernetes-models/v1/Pod'
import { Service as ServiceModel } from 'kubernetes-models/v1/Service'
import { NetworkPolicy as PolicyModel } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy'
import type {
  IContainer,
  IContainerStatus,
  IPod,
  IService,
  IVolumeMount
} from 'kubernetes-models/v1'
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'

export interface KubeStandInOptions {
  docker?: Docker
  namespace?: string
  /** RuntimeClass name → the Docker runtime that serves it. */
  runtimeClasses?: Record<string, string>
  /** Whether the network plugin enforces NetworkPolicy (shows Calico's API group). */
  enforceNetworkPolicy?: boolean
  /** The Docker network a policy's `ipBlock` egress joins (an upstream network the test made). */
  outside?: string
  /** The kubelet's pod PID limit. */
  podPidsLimit?: number
}

type Obj = Record<string, unknown>

interface RunningPod {
  pod: IPod
  dir: string
  containers: Map<string, Docker.Container>
  deadline?: NodeJS.Timeout
  deleted: boolean
  networks: string[]
}

/** Query parameters the API documents for each kind of request (the rest are refused). */
const QUERY: Record<string, string[]> = {
  create: ['pretty', 'dryRun', 'fieldManager', 'fieldValidation'],
  read: ['pretty'],
  list: [
    'pretty',
    'labelSelector',
    'fieldSelector',
    'limit',
    'continue',
    'watch',
    'resourceVersion',
    'resourceVersionMatch',
    'timeoutSeconds',
    'allowWatchBookmarks',
    'sendInitialEvents'
  ],
  delete: ['pretty', 'dryRun', 'gracePeriodSeconds', 'propagationPolicy', 'orphanDependents'],
  log: [
    'container',
    'follow',
    'previous',
    'sinceSeconds',
    'sinceTime',
    'timestamps',
    'tailLines',
    'limitBytes',
    'pretty',
    'insecureSkipTLSVerifyBackend',
    'stream'
  ],
  attach: ['container', 'stdin', 'stdout', 'stderr', 'tty'],
  exec: ['container', 'command', 'stdin', 'stdout', 'stderr', 'tty']
}

class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string
  ) {
    super(message)
  }
}

export class KubeStandIn {
  readonly requests: { method: string; path: string }[] = []
  readonly refused: string[] = []
  /** The pods as the client sent them. */
  readonly created: IPod[] = []
  private server?: http.Server
  private readonly docker: Docker
  readonly namespace: string
  private readonly pods = new Map<string, RunningPod>()
  private readonly services = new Map<string, IService>()
  private readonly policies = new Map<string, INetworkPolicy>()
  private readonly watchers = new Set<{ name?: string; res: http.ServerResponse }>()
  private readonly dockerNetworks = new Set<string>()
  private dropWatches = 0
  private version = 1
  private readonly tag = `kstand-${process.pid}-${Date.now().toString(36)}`
  private readonly root = fs.mkdtempSync(path.join(os.tmpdir(), 'kube-stand-in-'))

  constructor(private readonly options: KubeStandInOptions = {}) {
    this.docker = options.docker ?? new Docker()
    this.namespace = options.namespace ?? 'sandboxes'
    fs.chmodSync(this.root, 0o755)
  }

  get url(): string {
    const a = this.server?.address() as AddressInfo
    return `http://127.0.0.1:${a.port}`
  }

  /** A kubeconfig for this server (written to a file in the stand-in's folder). */
  kubeconfig(): string {
    const file = path.join(this.root, 'kubeconfig')
    fs.writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'stand-in', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }
        ],
        users: [{ name: 'u', user: { token: 'stand-in' } }],
        contexts: [
          { name: 'c', context: { cluster: 'stand-in', user: 'u', namespace: this.namespace } }
        ],
        'current-context': 'c'
      })
    )
    return file
  }

  async start(): Promise<void> {
    const wss = new WebSocketServer({
      noServer: true,
      handleProtocols: (protocols) =>
        protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false
    })
    this.server = http.createServer((req, res) => {
      void this.handle(req, res).catch((error: unknown) => this.fail(res, error))
    })
    this.server.on('upgrade', (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        void this.stream(req, ws).catch((error: unknown) => {
          this.refused.push(String(error))
          sendStatus(ws, { status: 'Failure', message: String(error) })
          ws.close()
        })
      })
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
  }

  /** The next `n` watches are cut after their first event (a lost watch). */
  loseWatches(n: number): void {
    this.dropWatches = n
  }

  /** Evicts a pod as the kubelet does under pressure: its containers killed, phase Failed. */
  async evict(
    name: string,
    message = 'The node was low on resource: ephemeral-storage.'
  ): Promise<void> {
    const p = this.pods.get(name)
    if (p === undefined) throw new Error(`no pod ${name}`)
    for (const c of p.containers.values()) await c.kill().catch(() => undefined)
    p.pod.status = { ...p.pod.status, phase: 'Failed', reason: 'Evicted', message }
    this.changed(p)
  }

  podNames(): string[] {
    return [...this.pods.keys()]
  }

  /** Every Docker object the stand-in made is removed; the server closes. */
  async stop(): Promise<void> {
    for (const w of this.watchers) w.res.end()
    for (const name of [...this.pods.keys()]) await this.removePod(name, 0)
    for (const n of this.dockerNetworks)
      await this.docker
        .getNetwork(n)
        .remove()
        .catch(() => undefined)
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve()
    )
    fs.rmSync(this.root, { recursive: true, force: true })
  }

  // ---- HTTP ----

  private fail(res: http.ServerResponse, error: unknown): void {
    const e =
      error instanceof HttpError ? error : new HttpError(500, 'InternalError', String(error))
    if (e.code >= 400) this.refused.push(`${e.code} ${e.message}`)
    if (res.headersSent) return void res.end()
    send(res, e.code, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: e.message,
      reason: e.reason,
      code: e.code
    })
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x')
    const method = req.method ?? 'GET'
    this.requests.push({ method, path: url.pathname })
    const p = url.pathname
    if (method === 'GET' && (p === '/version' || p === '/version/'))
      return send(res, 200, {
        major: '1',
        minor: '33',
        gitVersion: 'v1.33.0-stand-in',
        platform: 'linux/amd64'
      })
    if (method === 'GET' && (p === '/apis' || p === '/apis/')) return send(res, 200, this.groups())
    let m = /^\/apis\/node\.k8s\.io\/v1\/runtimeclasses\/([^/]+)$/.exec(p)
    if (m && method === 'GET') {
      const handler = (this.options.runtimeClasses ?? {})[m[1]]
      if (handler === undefined)
        throw new HttpError(404, 'NotFound', `runtimeclasses.node.k8s.io "${m[1]}" not found`)
      return send(res, 200, {
        apiVersion: 'node.k8s.io/v1',
        kind: 'RuntimeClass',
        metadata: { name: m[1] },
        handler: m[1]
      })
    }
    m =
      /^\/(api\/v1|apis\/networking\.k8s\.io\/v1)\/namespaces\/([^/]+)\/(pods|services|networkpolicies)(?:\/([^/]+))?(?:\/(log))?$/.exec(
        p
      )
    if (m === null)
      throw new HttpError(404, 'NotFound', `the stand-in does not serve ${method} ${p}`)
    const [, group, ns, kind, name, sub] = m
    if ((kind === 'networkpolicies') !== (group !== 'api/v1'))
      throw new HttpError(404, 'NotFound', `${kind} is not served under /${group}`)
    if (ns !== this.namespace) throw new HttpError(404, 'NotFound', `namespaces "${ns}" not found`)
    const action =
      sub === 'log'
        ? 'log'
        : name === undefined
          ? method === 'POST'
            ? 'create'
            : method === 'GET'
              ? 'list'
              : ''
          : method === 'GET'
            ? 'read'
            : method === 'DELETE'
              ? 'delete'
              : ''
    if (action === '' || (sub === 'log' && method !== 'GET'))
      throw new HttpError(405, 'MethodNotAllowed', `${method} ${p}`)
    for (const key of url.searchParams.keys()) {
      if (!QUERY[action].includes(key))
        throw new HttpError(400, 'BadRequest', `unknown query parameter "${key}" for ${action}`)
    }
    const body = method === 'POST' || method === 'DELETE' ? await readJson(req) : undefined
    if (kind === 'pods') return this.podsRoute(action, name, url, body, res)
    const store: Map<string, Obj> = (kind === 'services'
      ? this.services
      : this.policies) as unknown as Map<string, Obj>
    if (action === 'create') {
      const obj = body as Obj
      try {
        if (kind === 'services') new ServiceModel(obj as unknown as IService).validate()
        else new PolicyModel(obj as unknown as INetworkPolicy).validate()
      } catch (error) {
        throw new HttpError(422, 'Invalid', `${kind}: ${String(error)}`)
      }
      const meta = obj.metadata as Obj
      const n = String(meta.name)
      if (store.has(n)) throw new HttpError(409, 'AlreadyExists', `${kind} "${n}" already exists`)
      if (kind === 'networkpolicies') this.checkEmulable(obj as unknown as INetworkPolicy)
      meta.resourceVersion = String(this.version++)
      meta.uid = `${n}-${this.version}`
      if (kind === 'services') (obj.spec as Obj).clusterIPs = ['None']
      store.set(n, obj)
      return send(res, 201, obj)
    }
    if (action === 'list') {
      const items = [...store.values()].filter((o) =>
        selects(url.searchParams.get('labelSelector'), labelsOf(o))
      )
      return send(res, 200, {
        kind: kind === 'services' ? 'ServiceList' : 'NetworkPolicyList',
        apiVersion: group === 'api/v1' ? 'v1' : 'networking.k8s.io/v1',
        metadata: { resourceVersion: String(this.version) },
        items
      })
    }
    const found = store.get(name ?? '')
    if (found === undefined) throw new HttpError(404, 'NotFound', `${kind} "${name}" not found`)
    if (action === 'delete') store.delete(name ?? '')
    return send(res, 200, found)
  }

  private groups(): Obj {
    const group = (name: string, version: string) => ({
      name,
      versions: [{ groupVersion: `${name}/${version}`, version }],
      preferredVersion: { groupVersion: `${name}/${version}`, version }
    })
    const groups = [group('networking.k8s.io', 'v1'), group('node.k8s.io', 'v1')]
    if (this.options.enforceNetworkPolicy !== false)
      groups.push(group('crd.projectcalico.org', 'v1'))
    return { kind: 'APIGroupList', apiVersion: 'v1', groups }
  }

  /** A policy the stand-in cannot turn into Docker networks is refused, not half-applied. */
  private checkEmulable(policy: INetworkPolicy): void {
    for (const rule of policy.spec?.egress ?? []) {
      for (const peer of rule.to ?? []) {
        if (peer.namespaceSelector !== undefined)
          throw new HttpError(422, 'Invalid', 'the stand-in cannot emulate namespaceSelector')
        if (peer.ipBlock !== undefined && (peer.ipBlock.except ?? []).length > 0)
          throw new HttpError(422, 'Invalid', 'the stand-in cannot emulate ipBlock.except')
      }
      if ((rule.ports ?? []).length > 0)
        throw new HttpError(422, 'Invalid', 'the stand-in cannot emulate ports')
    }
  }

  private async podsRoute(
    action: string,
    name: string | undefined,
    url: URL,
    body: unknown,
    res: http.ServerResponse
  ): Promise<void> {
    if (action === 'create') {
      const pod = body as IPod
      try {
        new PodModel(pod).validate()
      } catch (error) {
        throw new HttpError(422, 'Invalid', `pods: ${String(error)}`)
      }
      const n = pod.metadata?.name ?? ''
      this.created.push(JSON.parse(JSON.stringify(pod)) as IPod)
      if (this.pods.has(n)) throw new HttpError(409, 'AlreadyExists', `pods "${n}" already exists`)
      const cls = pod.spec?.runtimeClassName
      if (cls !== undefined && (this.options.runtimeClasses ?? {})[cls] === undefined)
        throw new HttpError(403, 'Forbidden', `pod rejected: RuntimeClass "${cls}" not found`)
      pod.metadata = {
        ...pod.metadata,
        namespace: this.namespace,
        uid: `${n}-${this.version}`,
        resourceVersion: String(this.version++)
      }
      pod.status = { phase: 'Pending' }
      const dir = path.join(this.root, n)
      fs.mkdirSync(dir)
      const running: RunningPod = { pod, dir, containers: new Map(), deleted: false, networks: [] }
      this.pods.set(n, running)
      send(res, 201, pod)
      void this.kubelet(running).catch((error: unknown) => {
        running.pod.status = {
          ...running.pod.status,
          phase: 'Failed',
          reason: 'StandInError',
          message: String(error)
        }
        this.changed(running)
      })
      return
    }
    if (action === 'list') {
      if (url.searchParams.get('watch') === 'true') return this.watch(url, res)
      const items = [...this.pods.values()]
        .map((p) => p.pod)
        .filter((p) => selects(url.searchParams.get('labelSelector'), p.metadata?.labels ?? {}))
        .filter((p) => fieldSelects(url.searchParams.get('fieldSelector'), p))
      return send(res, 200, {
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: { resourceVersion: String(this.version) },
        items
      })
    }
    const p = this.pods.get(name ?? '')
    if (p === undefined) throw new HttpError(404, 'NotFound', `pods "${name}" not found`)
    if (action === 'read') return send(res, 200, p.pod)
    if (action === 'delete') {
      const grace = Number(
        url.searchParams.get('gracePeriodSeconds') ??
          p.pod.spec?.terminationGracePeriodSeconds ??
          30
      )
      send(res, 200, p.pod)
      void this.removePod(p.pod.metadata?.name ?? '', grace)
      return
    }
    // log
    const container = url.searchParams.get('container') ?? p.pod.spec?.containers[0].name ?? ''
    const c = await this.waitContainer(p, container)
    const follow = url.searchParams.get('follow') === 'true'
    res.writeHead(200, { 'content-type': 'text/plain' })
    if (follow) {
      const stream = await c.logs({ follow: true, stdout: true, stderr: true })
      const out = new PassThrough()
      this.docker.modem.demuxStream(stream, out, out)
      out.pipe(res)
      stream.on('end', () => out.end())
    } else {
      const buf = await c.logs({ follow: false, stdout: true, stderr: true })
      const out = new PassThrough()
      this.docker.modem.demuxStream(bufferStream(buf), out, out)
      out.pipe(res)
    }
  }

  private watch(url: URL, res: http.ServerResponse): void {
    const field = url.searchParams.get('fieldSelector') ?? ''
    const m = /^metadata\.name=(.+)$/.exec(field)
    const w = { ...(m ? { name: m[1] } : {}), res }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' })
    this.watchers.add(w)
    res.on('close', () => this.watchers.delete(w))
    if (this.dropWatches > 0) {
      this.dropWatches--
      // A lost watch: the connection is cut without a word.
      setTimeout(() => res.socket?.destroy(), 50)
    }
  }

  private changed(p: RunningPod, type: 'MODIFIED' | 'DELETED' = 'MODIFIED'): void {
    p.pod.metadata = { ...p.pod.metadata, resourceVersion: String(this.version++) }
    const line = `${JSON.stringify({ type, object: p.pod })}\n`
    for (const w of this.watchers) {
      if (w.name === undefined || w.name === p.pod.metadata?.name) w.res.write(line)
    }
  }

  // ---- the kubelet ----

  private image(ref: string): string {
    const m = /@sha256:([a-f0-9]{64})$/.exec(ref)
    if (m === null) throw new Error(`image ${ref} is not pinned by digest`)
    return `sha256:${m[1]}`
  }

  private async kubelet(p: RunningPod): Promise<void> {
    const spec = p.pod.spec
    if (spec === undefined) return
    for (const v of spec.volumes ?? []) {
      const d = path.join(p.dir, 'volumes', v.name)
      fs.mkdirSync(d, { recursive: true })
      fs.chmodSync(d, 0o777)
    }
    p.networks = await this.networksFor(p.pod)
    const runtime =
      spec.runtimeClassName !== undefined
        ? (this.options.runtimeClasses ?? {})[spec.runtimeClassName]
        : undefined
    if (spec.activeDeadlineSeconds !== undefined) {
      p.deadline = setTimeout(() => {
        void (async () => {
          for (const c of p.containers.values()) await c.kill().catch(() => undefined)
          p.pod.status = {
            ...p.pod.status,
            phase: 'Failed',
            reason: 'DeadlineExceeded',
            message: 'Pod was active on the node longer than the specified deadline'
          }
          this.changed(p)
        })()
      }, spec.activeDeadlineSeconds * 1000)
    }
    p.pod.status = {
      ...p.pod.status,
      initContainerStatuses: (spec.initContainers ?? []).map((c) => waitingStatus(c)),
      containerStatuses: spec.containers.map((c) => waitingStatus(c))
    }
    this.changed(p)
    for (const [i, c] of (spec.initContainers ?? []).entries()) {
      if (p.deleted) return
      const container = await this.createContainer(p, c, runtime, true)
      await container.start()
      setStatus(p.pod, 'init', i, { running: { startedAt: new Date().toISOString() } })
      p.pod.status = { ...p.pod.status, phase: 'Pending' }
      this.changed(p)
      const exit = (await container.wait()) as { StatusCode: number }
      const info = await container.inspect()
      setStatus(p.pod, 'init', i, terminated(exit.StatusCode, info.State.OOMKilled))
      if (exit.StatusCode !== 0) {
        p.pod.status = {
          ...p.pod.status,
          phase: 'Failed',
          reason: 'InitContainerFailed',
          message: `init container ${c.name} exited ${exit.StatusCode}`
        }
        this.changed(p)
        return
      }
      this.changed(p)
    }
    if (p.deleted) return
    const started = await Promise.all(
      spec.containers.map(async (c, i) => {
        const container = await this.createContainer(p, c, runtime, i === 0)
        return { c, i, container }
      })
    )
    for (const { container } of started) await container.start()
    const main = started[0].container
    const ip = await this.ipOf(main)
    p.pod.status = {
      ...p.pod.status,
      phase: 'Running',
      ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {})
    }
    for (const { i } of started)
      setStatus(p.pod, 'main', i, { running: { startedAt: new Date().toISOString() } })
    this.changed(p)
    await Promise.all(
      started.map(async ({ i, container }) => {
        const exit = (await container.wait()) as { StatusCode: number }
        const info = await container.inspect().catch(() => undefined)
        if (p.deleted) return
        setStatus(p.pod, 'main', i, terminated(exit.StatusCode, info?.State.OOMKilled === true))
        const all = (p.pod.status?.containerStatuses ?? []).every((s) => s.state?.terminated)
        if (all && p.pod.status?.phase === 'Running') {
          const ok = (p.pod.status.containerStatuses ?? []).every(
            (s) => s.state?.terminated?.exitCode === 0
          )
          p.pod.status = { ...p.pod.status, phase: ok ? 'Succeeded' : 'Failed' }
        }
        this.changed(p)
      })
    )
  }

  /** The pod's one address: on a network of the cluster (a policy's), not on `outside`. */
  private async ipOf(c: Docker.Container): Promise<string | undefined> {
    const info = await c.inspect()
    const nets = Object.entries(info.NetworkSettings.Networks)
    const inside = nets.filter(([name]) => name !== this.options.outside)
    for (const [, n] of [...inside, ...nets]) if (n.IPAddress) return n.IPAddress
    return undefined
  }

  /** The Docker networks a pod joins, from the policies that select it. */
  private async networksFor(pod: IPod): Promise<string[]> {
    const labels = pod.metadata?.labels ?? {}
    const shared = `${this.tag}-cluster`
    const selecting = [...this.policies.values()].filter((pol) =>
      matches(pol.spec?.podSelector?.matchLabels ?? {}, labels)
    )
    if (this.options.enforceNetworkPolicy === false || selecting.length === 0) {
      await this.ensureNetwork(shared, false)
      return [shared]
    }
    const out: string[] = []
    for (const pol of selecting) {
      for (const rule of pol.spec?.egress ?? []) {
        for (const peer of rule.to ?? []) {
          if (peer.podSelector !== undefined) {
            // Pods a policy lets reach each other: one internal network per policy.
            const n = `${this.tag}-${pol.metadata?.name ?? ''}`
            await this.ensureNetwork(n, true)
            if (!out.includes(n)) out.push(n)
          } else if (peer.ipBlock !== undefined && this.options.outside !== undefined) {
            if (!out.includes(this.options.outside)) out.push(this.options.outside)
          }
        }
      }
    }
    return out
  }

  private async ensureNetwork(name: string, internal: boolean): Promise<void> {
    if (this.dockerNetworks.has(name)) return
    await this.docker.createNetwork({
      Name: name,
      Internal: internal,
      ...(internal ? { Options: { 'com.docker.network.bridge.inhibit_ipv4': 'true' } } : {}),
      Labels: { 'dev.airlock.kube-stand-in': this.tag }
    })
    this.dockerNetworks.add(name)
  }

  private async createContainer(
    p: RunningPod,
    c: IContainer,
    runtime: string | undefined,
    withNetwork: boolean
  ): Promise<Docker.Container> {
    const spec = p.pod.spec ?? { containers: [] }
    const sec = c.securityContext ?? {}
    const podSec = spec.securityContext ?? {}
    const uid = sec.runAsUser ?? podSec.runAsUser
    const gid = sec.runAsGroup ?? podSec.runAsGroup ?? uid
    if ((sec.runAsNonRoot ?? podSec.runAsNonRoot) === true && (uid === undefined || uid === 0))
      throw new Error(`container ${c.name}: runAsNonRoot with uid ${uid}`)
    const binds: string[] = []
    const tmpfs: Record<string, string> = {}
    for (const m of c.volumeMounts ?? []) {
      const vol = (spec.volumes ?? []).find((v) => v.name === m.name)
      if (vol?.emptyDir === undefined) throw new Error(`volume ${m.name}: only emptyDir is served`)
      const nested = (c.volumeMounts ?? []).some((o) => o.mountPath.startsWith(`${m.mountPath}/`))
      if (
        vol.emptyDir.medium === 'Memory' &&
        onlyMount(spec, m.name) &&
        m.subPath === undefined &&
        !nested
      ) {
        const size = quantity(vol.emptyDir.sizeLimit ?? 64 * 1024 * 1024)
        tmpfs[m.mountPath] =
          `rw,nosuid,nodev,size=${size},mode=1777,uid=${uid ?? 0},gid=${gid ?? 0}`
        continue
      }
      const hostPath = path.join(
        p.dir,
        'volumes',
        m.name,
        ...(m.subPath !== undefined ? [m.subPath] : [])
      )
      binds.push(`${hostPath}:${m.mountPath}:${m.readOnly === true ? 'ro' : 'rw'}`)
    }
    // The kubelet mounts the service account's token unless the pod opts out.
    if (spec.automountServiceAccountToken !== false) {
      const tokenDir = path.join(p.dir, 'serviceaccount')
      fs.mkdirSync(tokenDir, { recursive: true })
      fs.writeFileSync(path.join(tokenDir, 'token'), 'stand-in-service-account-token', {
        mode: 0o644
      })
      binds.push(`${tokenDir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`)
    }
    const limits = c.resources?.limits ?? {}
    const networks = withNetwork ? p.networks : []
    const first = networks[0]
    const container = await this.docker.createContainer({
      name: `${this.tag}-${p.pod.metadata?.name ?? ''}-${c.name}`,
      Image: this.image(c.image ?? ''),
      Entrypoint: c.command ?? [],
      Cmd: c.args ?? [],
      WorkingDir: c.workingDir ?? '/',
      User: `${uid}:${gid}`,
      Env: (c.env ?? []).map((e) => `${e.name}=${e.value ?? ''}`),
      Labels: { 'dev.airlock.kube-stand-in': this.tag },
      AttachStdin: c.stdin === true,
      OpenStdin: c.stdin === true,
      StdinOnce: c.stdinOnce === true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      HostConfig: {
        ...(runtime !== undefined ? { Runtime: runtime } : {}),
        NetworkMode: first ?? 'none',
        Privileged: sec.privileged === true,
        ReadonlyRootfs: sec.readOnlyRootFilesystem === true,
        CapDrop: sec.capabilities?.drop ?? [],
        CapAdd: sec.capabilities?.add ?? [],
        SecurityOpt: sec.allowPrivilegeEscalation === false ? ['no-new-privileges:true'] : [],
        ...(limits.memory !== undefined
          ? { Memory: quantity(limits.memory), MemorySwap: quantity(limits.memory) }
          : {}),
        ...(limits.cpu !== undefined
          ? { NanoCpus: Math.round(cpuQuantity(limits.cpu) * 1e9) }
          : {}),
        PidsLimit: this.options.podPidsLimit ?? 4096,
        Binds: binds,
        Tmpfs: tmpfs,
        ExtraHosts: (spec.hostAliases ?? []).flatMap((h) =>
          (h.hostnames ?? []).map((n) => `${n}:${h.ip}`)
        ),
        IpcMode: spec.hostIPC === true ? 'host' : 'private',
        PidMode: spec.hostPID === true ? 'host' : '',
        ...(spec.hostNetwork === true ? { NetworkMode: 'host' } : {})
      }
    })
    for (const n of networks.slice(1))
      await this.docker.getNetwork(n).connect({ Container: container.id })
    p.containers.set(c.name, container)
    return container
  }

  private async waitContainer(p: RunningPod, name: string): Promise<Docker.Container> {
    for (let i = 0; i < 600; i++) {
      const c = p.containers.get(name)
      if (c !== undefined) return c
      if (p.deleted) break
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new HttpError(400, 'BadRequest', `container ${name} is not running`)
  }

  private async removePod(name: string, graceSeconds: number): Promise<void> {
    const p = this.pods.get(name)
    if (p === undefined || p.deleted) return
    p.deleted = true
    clearTimeout(p.deadline)
    await Promise.all(
      [...p.containers.values()].map((c) => c.stop({ t: graceSeconds }).catch(() => undefined))
    )
    for (const [i] of (p.pod.spec?.containers ?? []).entries()) {
      const c = [...p.containers.values()][i]
      const info = c ? await c.inspect().catch(() => undefined) : undefined
      const st = p.pod.status?.containerStatuses?.[i]?.state
      if (info !== undefined && st?.terminated === undefined && !info.State.Running)
        setStatus(p.pod, 'main', i, terminated(info.State.ExitCode, info.State.OOMKilled))
    }
    await Promise.all(
      [...p.containers.values()].map((c) =>
        c.remove({ force: true, v: true }).catch(() => undefined)
      )
    )
    this.pods.delete(name)
    fs.rmSync(p.dir, { recursive: true, force: true })
    this.changed(p, 'DELETED')
  }

  // ---- attach and exec (the v5 channel protocol over WebSocket) ----

  private async stream(req: http.IncomingMessage, ws: WebSocket): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x')
    this.requests.push({ method: 'WS', path: url.pathname })
    // What the client sends before the container's stream is open is kept, in order.
    const early: Buffer[] = []
    let deliver: ((data: Buffer) => void) | undefined
    ws.on('message', (data: Buffer) => (deliver ? deliver(data) : early.push(data)))
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/(attach|exec)$/.exec(url.pathname)
    if (m === null) throw new Error(`not served: ${url.pathname}`)
    const [, ns, name, what] = m
    if (ns !== this.namespace) throw new Error(`namespaces "${ns}" not found`)
    for (const key of url.searchParams.keys())
      if (!QUERY[what].includes(key))
        throw new Error(`unknown query parameter "${key}" for ${what}`)
    const p = this.pods.get(name)
    if (p === undefined) throw new Error(`pods "${name}" not found`)
    const containerName = url.searchParams.get('container') ?? ''
    const c = await this.waitContainer(p, containerName)
    const wantStdin = url.searchParams.get('stdin') === 'true'
    const out = new PassThrough()
    const err = new PassThrough()
    out.on('data', (d: Buffer) => ws.send(Buffer.concat([Buffer.from([1]), d])))
    err.on('data', (d: Buffer) => ws.send(Buffer.concat([Buffer.from([2]), d])))
    if (what === 'attach') {
      const stream = (await c.attach({
        stream: true,
        stdin: wantStdin,
        stdout: true,
        stderr: true,
        hijack: wantStdin
      })) as NodeJS.ReadWriteStream
      this.docker.modem.demuxStream(stream, out, err)
      deliver = (data: Buffer) => {
        if (data[0] === 0) stream.write(data.subarray(1))
        else if (data[0] === 255 && data[1] === 0) stream.end()
      }
      for (const d of early.splice(0)) deliver(d)
      ws.on('close', () => (stream as unknown as { destroy?: () => void }).destroy?.())
      stream.on('end', () => {
        sendStatus(ws, { status: 'Success' })
        ws.close()
      })
      return
    }
    const command = url.searchParams.getAll('command')
    const exec = await c.exec({
      Cmd: command,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: false
    })
    const stream = await exec.start({ hijack: true, stdin: false })
    this.docker.modem.demuxStream(stream, out, err)
    stream.on('end', () => {
      void exec.inspect().then((info) => {
        const code = info.ExitCode ?? -1
        sendStatus(
          ws,
          code === 0
            ? { status: 'Success' }
            : {
                status: 'Failure',
                reason: 'NonZeroExitCode',
                message: `command terminated with non-zero exit code: ${code}`,
                details: { causes: [{ reason: 'ExitCode', message: String(code) }] }
              }
        )
        ws.close()
      })
    })
  }
}

function sendStatus(ws: WebSocket, status: Obj): void {
  const body = Buffer.from(
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, ...status })
  )
  ws.send(Buffer.concat([Buffer.from([3]), body]))
}

function send(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    throw new HttpError(400, 'BadRequest', 'the body is not JSON')
  }
}

function labelsOf(o: Obj): Record<string, string> {
  return ((o.metadata as Obj | undefined)?.labels ?? {}) as Record<string, string>
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v)
}

function selects(selector: string | null, labels: Record<string, string>): boolean {
  if (selector === null || selector === '') return true
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=')
    return labels[k] === v
  })
}

function fieldSelects(selector: string | null, pod: IPod): boolean {
  if (selector === null || selector === '') return true
  const m = /^metadata\.name=(.+)$/.exec(selector)
  if (m === null) throw new HttpError(400, 'BadRequest', `field selector ${selector} is not served`)
  return pod.metadata?.name === m[1]
}

function onlyMount(spec: NonNullable<IPod['spec']>, volume: string): boolean {
  const all = [...(spec.initContainers ?? []), ...spec.containers]
  return (
    all.filter((c) => (c.volumeMounts ?? []).some((m: IVolumeMount) => m.name === volume))
      .length === 1
  )
}

function waitingStatus(c: IContainer): IContainerStatus {
  return {
    name: c.name,
    image: c.image ?? '',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { waiting: { reason: 'PodInitializing' } }
  }
}

function setStatus(pod: IPod, which: 'init' | 'main', i: number, state: Obj): void {
  const list = which === 'init' ? pod.status?.initContainerStatuses : pod.status?.containerStatuses
  if (list?.[i] !== undefined)
    list[i] = { ...list[i], state: state as IContainerStatus['state'], ready: 'running' in state }
}

function terminated(exitCode: number, oom: boolean): Obj {
  return {
    terminated: {
      exitCode,
      reason: oom ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error',
      finishedAt: new Date().toISOString()
    }
  }
}

function quantity(q: string | number): number {
  if (typeof q === 'number') return q
  const m = /^(\d+)(Ki|Mi|Gi|k|M|G)?$/.exec(q)
  if (m === null) throw new Error(`quantity ${q} is not served`)
  const mult: Record<string, number> = {
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    k: 1e3,
    M: 1e6,
    G: 1e9
  }
  return Number(m[1]) * (m[2] !== undefined ? mult[m[2]] : 1)
}

function cpuQuantity(q: string | number): number {
  if (typeof q === 'number') return q
  return q.endsWith('m') ? Number(q.slice(0, -1)) / 1000 : Number(q)
}

function bufferStream(buf: Buffer): NodeJS.ReadableStream {
  const s = new PassThrough()
  s.end(buf)
  return s
}
