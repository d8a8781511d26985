/** Schemas of coordination.k8s.io/v1 Leases, discovery.k8s.io/v1 EndpointSlices and nodelet.io/v1 NodeCredentialRequests. */
import { bool, definitions, int32, kind, listOf, obj, ref, str, strMap, strings, type JsonSchema } from './dsl.js';

export const LEASE_SLICE_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('coordination', {
    Lease: kind('coordination.k8s.io/v1:Lease', 'A lease held by one holder at a time (node heartbeats, leader election).', {
      spec: ref('coordination.LeaseSpec', 'Holder and times.'),
    }),
    LeaseSpec: obj('The state of a lease.', {
      holderIdentity: str('Who holds the lease.'),
      leaseDurationSeconds: int32('Seconds candidates wait after the last renewal before taking over.'),
      acquireTime: ref('meta.MicroTime', 'When the current holder acquired it.'),
      renewTime: ref('meta.MicroTime', 'When the holder last renewed it.'),
      leaseTransitions: int32('Times the holder changed.'),
      strategy: str('Leader election strategy (coordinated leader election).'),
      preferredHolder: str('Holder that should take over (coordinated leader election).'),
    }),
  }),
  ...definitions('discovery', {
    EndpointSlice: kind('discovery.k8s.io/v1:EndpointSlice', 'A part of the endpoints of a Service.', {
      addressType: str('`IPv4`, `IPv6` or `FQDN`.', { enum: ['FQDN', 'IPv4', 'IPv6'] }),
      endpoints: listOf('discovery.Endpoint', 'The endpoints (at most 1000).', { type: 'atomic' }),
      ports: listOf('discovery.EndpointPort', 'Ports every endpoint serves.', { type: 'atomic' }),
    }, { required: ['addressType', 'endpoints'] }),
    Endpoint: obj('One backend of a Service.', {
      addresses: strings('Addresses of the endpoint (one is used).', { type: 'set' }),
      conditions: ref('discovery.EndpointConditions', 'Readiness of the endpoint.'),
      hostname: str('Hostname of the endpoint.'),
      targetRef: ref('core.ObjectReference', 'The pod behind it.'),
      deprecatedTopology: strMap('Deprecated topology labels.'),
      nodeName: str('Node the endpoint is on.'),
      zone: str('Zone the endpoint is in.'),
      hints: ref('discovery.EndpointHints', 'Routing hints.'),
    }, { required: ['addresses'] }),
    EndpointConditions: obj('Readiness of an endpoint.', {
      ready: bool('Ready to receive traffic (false while terminating).'),
      serving: bool('Ready, whether or not terminating.'),
      terminating: bool('Being deleted.'),
    }),
    EndpointHints: obj('Where an endpoint should be used.', { forZones: listOf('discovery.ForZone', 'Zones that should use it.', { type: 'atomic' }) }),
    ForZone: obj('A zone.', { name: str('Zone name.') }, { required: ['name'] }),
    EndpointPort: obj('A port of endpoints.', {
      name: str('Name matching the Service port.'),
      protocol: str('`TCP`, `UDP` or `SCTP`.', { enum: ['SCTP', 'TCP', 'UDP'] }),
      port: int32('Port number.'),
      appProtocol: str('Application protocol.'),
    }, { mapType: 'atomic' }),
  }),
  ...definitions('nodelet', {
    NodeCredentialRequest: kind('nodelet.io/v1:NodeCredentialRequest', 'nodelet: exchanges a bootstrap token (or a node’s current credential) for a node credential.', {
      spec: ref('nodelet.NodeCredentialRequestSpec', 'The node.'),
      status: ref('nodelet.NodeCredentialRequestStatus', 'The issued credential.'),
    }),
    NodeCredentialRequestSpec: obj('The node a credential is asked for.', { nodeName: str('Name of the node.') }),
    NodeCredentialRequestStatus: obj('An issued node credential.', {
      token: str('Bearer token of the node.'),
      user: str('User the token authenticates as.'),
      groups: strings('Groups of that user.'),
      expirationTimestamp: ref('meta.Time', 'When the token expires.'),
      certificateAuthorityData: str('The cluster CA, base64 PEM.'),
    }),
  }),
};
