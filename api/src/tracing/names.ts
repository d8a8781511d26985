/**
 * Span and attribute names of the pod journey (docs/tracing.md lists what each step covers).
 * Top-level steps are children of the root span and follow each other; the others nest in them.
 */
export const SPAN = {
  /** Root: the create request arrives → the API server stores the status that makes the pod Ready. */
  journey: 'pod journey',
  /** API server: create request → admitted, stored and visible to watches. */
  apiCreate: 'api.create',
  /** Scheduler: first seen pending → popped for a scheduling cycle (includes backoff of failed attempts). */
  schedulerQueue: 'scheduler.queue',
  /** Scheduler: the scheduling cycle that found the node (filter, score, assume). */
  schedulerSchedule: 'scheduler.schedule',
  /** Scheduler: PreBind (volumes) and POST pods/binding until accepted. */
  schedulerBind: 'scheduler.bind',
  /** Agent: pod seen in the agent's pod configuration → admitted. */
  agentAdmit: 'agent.admit',
  /** Agent: one pod worker sync that lays the pod out (volumes, sandbox, containers). */
  agentSync: 'agent.sync',
  agentVolumes: 'agent.volumes',
  /** RunPodSandbox; its child `cni.add` is the CNI ADD the runtime asked for. */
  agentSandbox: 'agent.sandbox',
  cniAdd: 'cni.add',
  agentImagePull: 'agent.image.pull',
  agentImagePresent: 'agent.image.present',
  agentContainerCreate: 'agent.container.create',
  agentContainerStart: 'agent.container.start',
  agentPostStart: 'agent.container.post_start',
  /** Agent: the last sync's end → the agent's runtime view (PLEG) shows every container running. */
  agentObserve: 'agent.observe',
  /** Agent: containers running → Ready (startup and readiness probes passing). */
  agentProbes: 'agent.probes',
  /** Agent: Ready computed → the status patch carrying it accepted by the API server. */
  agentStatus: 'agent.status',
} as const;

export const ATTR = {
  podName: 'k8s.pod.name',
  namespace: 'k8s.namespace.name',
  podUid: 'k8s.pod.uid',
  nodeName: 'k8s.node.name',
  containerName: 'k8s.container.name',
  image: 'container.image.name',
  /** How many scheduling attempts the pod needed. */
  attempts: 'nodelet.scheduler.attempts',
} as const;
