/**
 * Where `nodelet doctor` finds this node's runtime and CNI state when no flags say so: the agent's
 * own configuration. In order:
 *
 *   --lab [dir]                      the lab node: <dir>/agent.yaml (paths of `make up` where it is older)
 *   any runtime/CNI flag given        the flags (and defaults for the rest)
 *   /etc/nodelet/agent.yaml           a node set up by `nodelet join` / `nodelet install agent`
 *   /var/lib/nodelet/lab/agent.yaml   when /run/containerd/containerd.sock is missing: the `make up` node
 *   —                                 the defaults (containerd's socket, /etc/cni/net.d, …)
 *
 * The agent's field names are the kubelet's KubeletConfiguration (docs/agent.md); this file reads
 * only the ones doctor needs. Pure apart from the two injected file functions, so every branch is
 * unit-tested.
 */
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_LAB_STATE_DIR } from '@nodelet/lab-runtime';
import { labPaths } from '../lab/cluster.js';

export const ETC_AGENT_CONFIG = '/etc/nodelet/agent.yaml';
/** The `make up` lab's state dir (lab-runtime's lab-layout.ts owns it). */
export const DEFAULT_LAB_DIR = DEFAULT_LAB_STATE_DIR;
export const DEFAULT_RUNTIME_SOCKET = '/run/containerd/containerd.sock';

/** The options doctor takes from a node's configuration. */
export interface NodeConfigValues {
  containerRuntimeEndpoint: string;
  cniConfDir: string;
  cniBinDir: string;
  cniPluginDirs: string;
  cniCacheDir: string;
  ipamDir: string;
  netnsDir: string;
  bridge: string;
  kubeconfig?: string;
  nodeName?: string;
  rootDir?: string;
}

export interface DetectedConfig {
  /** Which configuration was used, for the `doctor.config` line. */
  source: string;
  values: Partial<NodeConfigValues>;
}

export interface DetectFs {
  exists(path: string): boolean;
  read(path: string): string;
}

interface AgentYaml {
  containerRuntimeEndpoint?: string;
  cniBinDir?: string;
  cniConfDir?: string;
  cniPluginDirs?: string[];
  cniCacheDir?: string;
  cniIpamDataDir?: string;
  cniBridgeName?: string;
  rootDir?: string;
}

/**
 * Picks the configuration per the order above. `explicit` are the options the user gave (they are
 * never overridden); `lab` is `--lab`'s value (true = the default dir).
 */
export function detectNodeConfig(o: { lab?: string | boolean; explicit: ReadonlySet<string>; fs: DetectFs }): DetectedConfig | undefined {
  const { fs } = o;
  if (o.lab) return fromLab(typeof o.lab === 'string' ? o.lab : DEFAULT_LAB_DIR, fs);
  const nodeFlags = ['containerRuntimeEndpoint', 'cniConfDir', 'cniBinDir', 'cniCacheDir', 'ipamDir', 'netnsDir'];
  if (nodeFlags.some((f) => o.explicit.has(f))) return undefined;
  if (fs.exists(ETC_AGENT_CONFIG)) {
    const y = readAgentYaml(ETC_AGENT_CONFIG, fs);
    const kubeconfig = '/etc/nodelet/agent.kubeconfig';
    return { source: `agent config ${ETC_AGENT_CONFIG}`, values: { ...fromAgentYaml(y), ...(fs.exists(kubeconfig) ? { kubeconfig, nodeName: nodeFromKubeconfig(kubeconfig, fs) } : {}) } };
  }
  if (!fs.exists(DEFAULT_RUNTIME_SOCKET) && fs.exists(join(DEFAULT_LAB_DIR, 'agent.yaml'))) return fromLab(DEFAULT_LAB_DIR, fs);
  return undefined;
}

function fromLab(dir: string, fs: DetectFs): DetectedConfig {
  const p = labPaths(dir);
  const file = p.agentConfig;
  const y = fs.exists(file) ? readAgentYaml(file, fs) : {};
  // A lab older than the runtime endpoint in its agent.yaml: the paths `nodelet lab up` uses.
  const values: Partial<NodeConfigValues> = {
    containerRuntimeEndpoint: `unix://${join(p.containerd, 'containerd.sock')}`,
    cniConfDir: p.cniConf,
    cniBinDir: p.cniBin,
    cniCacheDir: p.cniCache,
    ipamDir: p.ipam,
    // the lab's containerd pins network namespaces under its own state dir
    netnsDir: join(p.containerd, 'state', 'io.containerd.grpc.v1.cri', 'netns'),
    bridge: 'nodelet0',
    ...fromAgentYaml(y),
    kubeconfig: p.agentKubeconfig,
    nodeName: fs.exists(p.agentKubeconfig) ? nodeFromKubeconfig(p.agentKubeconfig, fs) : undefined,
  };
  return { source: fs.exists(file) ? `lab agent config ${file}` : `lab state dir ${dir} (no agent.yaml)`, values };
}

function readAgentYaml(file: string, fs: DetectFs): AgentYaml {
  const doc = parseYaml(fs.read(file)) as unknown;
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${file} is not a YAML map`);
  return doc as AgentYaml;
}

function fromAgentYaml(y: AgentYaml): Partial<NodeConfigValues> {
  const v: Partial<NodeConfigValues> = {};
  if (y.containerRuntimeEndpoint) v.containerRuntimeEndpoint = y.containerRuntimeEndpoint.includes('://') ? y.containerRuntimeEndpoint : `unix://${y.containerRuntimeEndpoint}`;
  if (y.cniBinDir) v.cniBinDir = y.cniBinDir;
  if (y.cniConfDir) v.cniConfDir = y.cniConfDir;
  if (y.cniPluginDirs?.length) v.cniPluginDirs = y.cniPluginDirs.join(':');
  if (y.cniCacheDir) v.cniCacheDir = y.cniCacheDir;
  // host-local's own default when the agent does not set one
  v.ipamDir = y.cniIpamDataDir ?? v.ipamDir;
  if (y.cniBridgeName) v.bridge = y.cniBridgeName;
  if (y.rootDir) v.rootDir = y.rootDir;
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) as Partial<NodeConfigValues>;
}

/** The node a node credential belongs to: its kubeconfig user is `system:node:<name>`. */
function nodeFromKubeconfig(file: string, fs: DetectFs): string | undefined {
  try {
    const doc = parseYaml(fs.read(file)) as { users?: Array<{ name?: string }> };
    const user = doc.users?.map((u) => u.name).find((n) => n?.startsWith('system:node:'));
    return user?.slice('system:node:'.length);
  } catch {
    return undefined; // unreadable kubeconfig: the server checks report it
  }
}
