// @nodelet/cli: the nodelet command (cri, cni, image, runtime, lab, doctor, install, join, token).
// Exported for the e2e suites, which drive the same code paths the commands run.
export { labUp, labDown, labPaths, labCgroupRoot, defaultLabOptions, startLabAgent, type LabOptions, type LabUpResult, type LabDownResult } from './commands/lab/cluster.js';
export { doctor } from './commands/doctor/command.js';
export { createToken } from './commands/ops/token.js';
export { join } from './commands/ops/join.js';
export { labAddNode, labRemoveNode, type LabNode, type LabNodeOptions } from './commands/lab/add-node.js';
export { netnsName, nodeNetworkHostAddress, routerNetnsName, vethName, type NodeNetwork } from './commands/lab/node-network.js';
export { labVxlanVni } from './commands/lab/pod-network.js';
export { stopProcess, runningPid } from './commands/lab/processes.js';
export { createUserKubeconfig, type KubeconfigCreateOptions } from './commands/ops/kubeconfig-create.js';
export { parsePodRef } from './commands/trace.js';
export { fetchPodTrace, type PodTrace } from './commands/trace/fetch.js';
export { buildWaterfall, type Waterfall, type WaterfallRow } from './commands/trace/waterfall.js';
export { renderWaterfallText } from './commands/trace/render-text.js';
export { escapeXml, renderWaterfallSvg, type SvgPanel } from './commands/trace/render-svg.js';
export { auditLogFiles, queryAuditLog, formatAuditTable, type AuditQuery, type AuditEventLine } from './commands/audit/query.js';
