/**
 * The service proxy (docs/services.md): `startServiceProxy` is what `nodelet agent` and
 * `nodelet proxy` call; the rest is exported for the CLI, tests and the bench.
 */
import { AgentError } from '@nodelet/base';
import { ServiceProxy, type ServiceProxyOptions } from './proxier.js';

export { ServiceProxy, deleteProxyTable, LAST_CHANGE_TRIGGER_TIME, type ServiceProxyOptions, type SyncInfo } from './proxier.js';
export { resolveProxyConfig, type ProxyConfig, type ProxyConfigFile, type ProxyFlags, type ProxyMode } from './config.js';
export { TABLE as PROXY_TABLE, renderTable, type RenderOptions } from './render.js';
export { buildModel } from './model.js';
export { Nft, mapKeys } from './nft.js';
export { commandRunner } from './exec.js';

/**
 * Starts the proxy for `config.mode`: `none` returns undefined, `iptables` is refused (not
 * implemented), `nftables` resolves once the table is in place (see ServiceProxy.start).
 */
export async function startServiceProxy(o: ServiceProxyOptions): Promise<ServiceProxy | undefined> {
  switch (o.config.mode) {
    case 'none':
      o.log.info({}, 'Service proxy disabled (proxy mode none)');
      return undefined;
    case 'iptables':
      throw new AgentError('ERR_UNIMPLEMENTED', 'proxy mode "iptables" is not implemented; use --proxy-mode nftables (the default) or none');
    default:
      return ServiceProxy.start(o);
  }
}
