// The flags of `airlock run` and `airlock plan` that are the action's inputs: one per input (same
// names), grouped for the help, with the value's shape and whether it repeats or is a switch.
import { INPUT } from '../input-names.js'
import { AGENT_INPUT, AGENT_KEY_ENV, PRESETS } from '../presets/presets.js'
import { GROUPS, f } from './flags.js'
import type { FlagSpec } from './flags.js'

/** Flags that run and plan share: the action's inputs. */
export const INPUT_FLAGS: FlagSpec[] = [
  f(INPUT.path, 'value', GROUPS.repo, 'DIR', 'repository to work on (default .)'),
  f(INPUT.ref, 'value', GROUPS.repo, 'REV', 'revision to work on, must exist (default HEAD)'),
  f(
    INPUT.outputDir,
    'value',
    GROUPS.repo,
    'DIR',
    'where the evidence goes, created when missing (default airlock-out)'
  ),
  f(INPUT.runId, 'value', GROUPS.repo, 'ID', 'name of the run: labels, cleanup (default local-…)'),
  f(
    INPUT.policyBase,
    'value',
    GROUPS.repo,
    'REV',
    'read .github/airlock.yml from this commit; flags override it (default: no policy file)'
  ),
  f(
    AGENT_INPUT,
    'value',
    GROUPS.agent,
    'NAME',
    `agent preset (${Object.keys(PRESETS).join(', ')}): image, command, allowlist and model route; the key comes from $${AGENT_KEY_ENV}; flags given override its parts`
  ),
  f(INPUT.model, 'value', GROUPS.agent, 'NAME', 'model the agent uses (recorded in the report)'),
  f(
    INPUT.agentCommand,
    'value',
    GROUPS.agent,
    'CMD',
    'shell command that runs the agent (required without --agent)'
  ),
  f(
    INPUT.dockerfile,
    'value',
    GROUPS.agent,
    'FILE',
    'build the agent image from this Dockerfile …'
  ),
  f(INPUT.image, 'value', GROUPS.agent, 'NAME@sha256:D', '… or use this digest-pinned image'),
  f(
    INPUT.buildContext,
    'value',
    GROUPS.agent,
    'DIR',
    "build context (default: the Dockerfile's folder)"
  ),
  f(INPUT.buildArgs, 'list', GROUPS.agent, 'K=V', 'build argument (repeatable)'),
  f(
    INPUT.allowUnpinnedBase,
    'switch',
    GROUPS.agent,
    undefined,
    'accept FROM lines not pinned by digest (recorded as a warning)'
  ),
  f(
    INPUT.imageCache,
    'value',
    GROUPS.agent,
    'auto|off',
    'keep a copy of a built agent image in the cache folder (default off; auto on a GitHub runner)'
  ),
  f(
    INPUT.task,
    'value',
    GROUPS.task,
    'TEXT|FILE',
    'the task, given to the agent at /airlock/task.md; a value that looks like a path (a slash, an extension, an existing name) must be a readable file inside the current folder'
  ),
  f(
    INPUT.continueFrom,
    'value',
    GROUPS.task,
    'DIR',
    'continue an earlier run: its output folder (checked against its provenance.json); the task quotes its task and answer, and its patch is applied first when it ran on the same commit'
  ),
  f(
    INPUT.continueContext,
    'value',
    GROUPS.task,
    'JSON',
    "with --continue-from: the command mode's continue-context (the run the review names, review comments)"
  ),
  f(
    INPUT.setupCommand,
    'value',
    GROUPS.setup,
    'CMD',
    'install command run once on the fresh workspace, before the baseline and the agent'
  ),
  f(
    INPUT.setupAllowHosts,
    'list',
    GROUPS.setup,
    'HOST',
    'registry the install may reach (repeatable): npm, pypi, crates, go, debian, or a host name'
  ),
  f(
    INPUT.dependencyCache,
    'value',
    GROUPS.setup,
    'auto|off',
    "keep the install's package cache by lockfile in ~/.cache/airlock (default auto)"
  ),
  f(
    INPUT.testCommand,
    'value',
    GROUPS.tests,
    'CMD',
    'shell command that runs the tests, in a fresh network-less container'
  ),
  f(
    INPUT.testReports,
    'list',
    GROUPS.tests,
    'PATH',
    'report the tests write, relative to the repository (repeatable): JUnit XML, Jest/Vitest --json, pytest-json-report, go test -json'
  ),
  f(
    INPUT.compareBase,
    'switch',
    GROUPS.tests,
    undefined,
    'run the tests on the unchanged tree too and classify each test (needs --test-command)'
  ),
  f(
    INPUT.services,
    'value',
    GROUPS.tests,
    'YAML',
    'service containers for the test phases: name → {image, health, env, command, user} (docs/services.md)'
  ),
  f(
    INPUT.network,
    'value',
    GROUPS.network,
    'none|allowlist',
    "the agent container's network (default none; allowlist: only through the egress proxy)"
  ),
  f(
    INPUT.allowHosts,
    'list',
    GROUPS.network,
    'HOST',
    'host the agent may reach with allowlist (repeatable; *.example.com, host:port)'
  ),
  f(
    INPUT.hostMap,
    'list',
    GROUPS.network,
    'NAME=IP[:P]',
    'pin a name to an address, like curl --resolve (repeatable)'
  ),
  f(
    INPUT.credentials,
    'list',
    GROUPS.network,
    'SPEC',
    'NAME=https://upstream|SECRET_ENV|HEADER[|BASE_URL_ENV[|KEY_ENV]][|allow=METHOD /path,...] (repeatable): the proxy adds the secret; the agent never holds it'
  ),
  f(
    INPUT.maxModelRequests,
    'value',
    GROUPS.network,
    'N',
    'model requests the run may send (then 429)'
  ),
  f(INPUT.maxModelTokens, 'value', GROUPS.network, 'N', 'tokens the run may use (then 429)'),
  f(
    INPUT.maxCostUsd,
    'value',
    GROUPS.network,
    'USD',
    'dollars the model requests may cost, at list prices (then 429)'
  ),
  f(
    INPUT.upstreamCa,
    'value',
    GROUPS.network,
    'PEM|FILE',
    'extra CA the proxy trusts for credentials upstreams'
  ),
  f(
    INPUT.proxyImage,
    'value',
    GROUPS.network,
    'IMAGE',
    'image (node 18+) of the egress proxy: name@sha256:D or sha256:ID'
  ),
  f(
    INPUT.proxyNetwork,
    'value',
    GROUPS.network,
    'NAME',
    "existing network for the proxy's upstream side (default: a new one)"
  ),
  f(
    INPUT.isolation,
    'value',
    GROUPS.sandbox,
    'auto|NAME',
    "choose the runtime from the run's risk (auto) or a tier by name (runc, runsc, ...); one the engine cannot provide fails closed (docs/isolation.md)"
  ),
  f(
    INPUT.engine,
    'value',
    GROUPS.sandbox,
    'docker|kubernetes|auto',
    'the backend that runs the sandbox: docker (default), kubernetes (pods through the API server; docs/kubernetes.md), or auto (kubernetes in a cluster without a Docker engine)'
  ),
  f(
    INPUT.kubernetesNamespace,
    'value',
    GROUPS.sandbox,
    'NAME',
    "with engine kubernetes: the namespace of the run's pods (default: the kubeconfig context's)"
  ),
  f(
    INPUT.runtime,
    'value',
    GROUPS.sandbox,
    'NAME',
    'OCI runtime: runc (default), runsc (gVisor), or one configured in dockerd'
  ),
  f(
    INPUT.timeoutMinutes,
    'value',
    GROUPS.sandbox,
    'N',
    'per phase (default 30); then SIGTERM, grace, SIGKILL'
  ),
  f(INPUT.graceSeconds, 'value', GROUPS.sandbox, 'N', 'between SIGTERM and SIGKILL (default 10)'),
  f(INPUT.memory, 'value', GROUPS.sandbox, 'SIZE', 'memory limit, swap included (default 2g)'),
  f(INPUT.cpus, 'value', GROUPS.sandbox, 'N', 'CPU limit (default 2)'),
  f(INPUT.pidsLimit, 'value', GROUPS.sandbox, 'N', 'process limit (default 512)'),
  f(
    INPUT.workspaceSize,
    'value',
    GROUPS.sandbox,
    'SIZE',
    'size of the filesystem holding all the sandbox writes (default 4g; needs root or sudo to enforce)'
  ),
  f(
    INPUT.user,
    'value',
    GROUPS.sandbox,
    'UID[:GID]',
    'non-root user of the containers (default: yours, or 1000)'
  ),
  f(
    INPUT.env,
    'list',
    GROUPS.sandbox,
    'NAME',
    'host variable to pass in (repeatable); GitHub tokens are refused'
  ),
  f(INPUT.maxLogBytes, 'value', GROUPS.sandbox, 'N', 'cap of each phase log (default 5242880)'),
  f(
    INPUT.allowedPaths,
    'list',
    GROUPS.review,
    'GLOB',
    'the agent may change only these paths (repeatable); others are a violation'
  ),
  f(
    INPUT.protectedPaths,
    'list',
    GROUPS.review,
    'GLOB',
    'changes here need explicit approval (repeatable); +GLOB extends the defaults, plain GLOBs replace them, none protects nothing'
  ),
  f(
    INPUT.maxChangedFiles,
    'value',
    GROUPS.review,
    'N',
    'files listed in the report (default 2000); more is a violation'
  ),
  f(
    INPUT.maxDiffBytes,
    'value',
    GROUPS.review,
    'N',
    'size of diff.patch (default 20971520); more is a violation'
  ),
  f(
    INPUT.threatReview,
    'value',
    GROUPS.review,
    'acknowledge|block',
    'a malicious threat review verdict: the approval must acknowledge it (default), or the run fails (block)'
  ),
  f(
    INPUT.dryRun,
    'switch',
    GROUPS.action,
    undefined,
    'recorded in the plan; the action then publishes nothing'
  ),
  f(
    INPUT.artifactName,
    'value',
    GROUPS.action,
    'NAME',
    "name of the run's artifact (the action uploads the output folder under it)"
  )
]
