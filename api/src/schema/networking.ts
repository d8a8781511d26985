/** Schemas of networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy. */
import { definitions, int32, kind, listOf, obj, ref, str, strings, type JsonSchema } from './dsl.js';

export const NETWORKING_SCHEMAS: Record<string, JsonSchema> = definitions('networking', {
  Ingress: kind('networking.k8s.io/v1:Ingress', 'Rules routing outside HTTP(S) traffic to Services; served by an ingress controller, none of which ships with nodelet.', {
    spec: ref('networking.IngressSpec', 'The routing wanted.'),
    status: ref('networking.IngressStatus', 'Where the controller serves the Ingress. Read-only through the main resource.'),
  }),
  IngressSpec: obj('The routing of an Ingress.', {
    ingressClassName: str('The IngressClass whose controller serves this Ingress; the default class is filled in at creation when unset.'),
    defaultBackend: ref('networking.IngressBackend', 'Where requests matching no rule go.'),
    tls: listOf('networking.IngressTLS', 'TLS termination: hosts and the Secret holding their certificate.', { type: 'atomic' }),
    rules: listOf('networking.IngressRule', 'Host rules; with none, everything goes to the default backend.', { type: 'atomic' }),
  }),
  IngressTLS: obj('Hosts served with the certificate of a Secret.', {
    hosts: strings('Hosts the certificate covers.'),
    secretName: str('A Secret of the Ingress’s namespace holding tls.crt and tls.key.'),
  }),
  IngressRule: obj('Paths of one host (of any host when unset).', {
    host: str('A DNS name, possibly with a leading `*.` wildcard label; not an IP address.'),
    http: ref('networking.HTTPIngressRuleValue', 'The HTTP paths.'),
  }),
  HTTPIngressRuleValue: obj('HTTP paths of a rule.', {
    paths: listOf('networking.HTTPIngressPath', 'Paths to backends.', { type: 'atomic' }),
  }, { required: ['paths'] }),
  HTTPIngressPath: obj('A path and its backend.', {
    path: str('The path matched; must start with `/` for Exact and Prefix.'),
    pathType: str('`Exact`, `Prefix` or `ImplementationSpecific`.', { enum: ['Exact', 'ImplementationSpecific', 'Prefix'] }),
    backend: ref('networking.IngressBackend', 'Where matching requests go.'),
  }, { required: ['pathType', 'backend'] }),
  IngressBackend: obj('A Service port or another object to send requests to (exactly one).', {
    service: ref('networking.IngressServiceBackend', 'A Service of the Ingress’s namespace.'),
    resource: ref('core.TypedLocalObjectReference', 'Another object of the Ingress’s namespace.'),
  }),
  IngressServiceBackend: obj('A Service and port.', {
    name: str('The Service.'),
    port: ref('networking.ServiceBackendPort', 'Its port, by name or number.'),
  }, { required: ['name'] }),
  ServiceBackendPort: obj('A Service port, by name or number (exactly one).', {
    name: str('The port’s name.'),
    number: int32('The port’s number.'),
  }),
  IngressStatus: obj('Where an Ingress is served.', {
    loadBalancer: ref('networking.IngressLoadBalancerStatus', 'The controller’s addresses.'),
  }),
  IngressLoadBalancerStatus: obj('Addresses serving an Ingress.', {
    ingress: listOf('networking.IngressLoadBalancerIngress', 'The addresses.', { type: 'atomic' }),
  }),
  IngressLoadBalancerIngress: obj('An address serving an Ingress.', {
    ip: str('An IP address.'),
    hostname: str('A DNS name.'),
    ports: listOf('networking.IngressPortStatus', 'Ports of the address.', { type: 'atomic' }),
  }),
  IngressPortStatus: obj('State of a port.', {
    port: int32('The port.'),
    protocol: str('TCP, UDP or SCTP.', { enum: ['SCTP', 'TCP', 'UDP'] }),
    error: str('A problem of the port.'),
  }, { required: ['port', 'protocol'] }),
  IngressClass: kind('networking.k8s.io/v1:IngressClass', 'A kind of Ingress and the controller serving it; the one annotated ingressclass.kubernetes.io/is-default-class: "true" is the default.', {
    spec: ref('networking.IngressClassSpec', 'The controller and its parameters.'),
  }),
  IngressClassSpec: obj('The controller of an IngressClass.', {
    controller: str('The controller’s name as a domain-prefixed path (`k8s.io/ingress-nginx`). Immutable.'),
    parameters: ref('networking.IngressClassParametersReference', 'An object configuring the controller.'),
  }),
  IngressClassParametersReference: obj('An object with a controller’s configuration.', {
    apiGroup: str('Its API group; the core group when unset.'),
    kind: str('Its kind.'),
    name: str('Its name.'),
    scope: str('`Cluster` or `Namespace`.', { enum: ['Cluster', 'Namespace'] }),
    namespace: str('Its namespace, when scope is Namespace.'),
  }, { required: ['kind', 'name'] }),
  NetworkPolicy: kind('networking.k8s.io/v1:NetworkPolicy', 'Traffic allowed to and from selected pods. Stored and validated; NOT enforced by nodelet yet.', {
    spec: ref('networking.NetworkPolicySpec', 'The pods and the traffic allowed.'),
  }),
  NetworkPolicySpec: obj('The pods a policy selects and the traffic it allows.', {
    podSelector: ref('meta.LabelSelector', 'Pods of the namespace the policy applies to; `{}` selects all.'),
    ingress: listOf('networking.NetworkPolicyIngressRule', 'Traffic allowed in.', { type: 'atomic' }),
    egress: listOf('networking.NetworkPolicyEgressRule', 'Traffic allowed out.', { type: 'atomic' }),
    policyTypes: strings('`Ingress`, `Egress` or both.'),
  }),
  NetworkPolicyIngressRule: obj('Traffic allowed in: from any of the peers, to any of the ports.', {
    ports: listOf('networking.NetworkPolicyPort', 'Ports; all when empty.', { type: 'atomic' }),
    from: listOf('networking.NetworkPolicyPeer', 'Sources; all when empty.', { type: 'atomic' }),
  }),
  NetworkPolicyEgressRule: obj('Traffic allowed out: to any of the peers, on any of the ports.', {
    ports: listOf('networking.NetworkPolicyPort', 'Ports; all when empty.', { type: 'atomic' }),
    to: listOf('networking.NetworkPolicyPeer', 'Destinations; all when empty.', { type: 'atomic' }),
  }),
  NetworkPolicyPort: obj('A port or port range.', {
    protocol: str('TCP (default), UDP or SCTP.', { enum: ['SCTP', 'TCP', 'UDP'] }),
    port: ref('intstr.IntOrString', 'A port number or a named container port; all ports when unset.'),
    endPort: int32('The last port of a range starting at port (numeric port only).'),
  }),
  NetworkPolicyPeer: obj('Pods, namespaces or an IP block (an IP block alone).', {
    podSelector: ref('meta.LabelSelector', 'Pods, of the policy’s namespace unless namespaceSelector is set.'),
    namespaceSelector: ref('meta.LabelSelector', 'Namespaces, by label.'),
    ipBlock: ref('networking.IPBlock', 'A CIDR and exceptions.'),
  }),
  IPBlock: obj('A CIDR less some sub-CIDRs.', {
    cidr: str('The CIDR (`10.0.0.0/8`).'),
    except: strings('CIDRs inside cidr that are left out.'),
  }, { required: ['cidr'] }),
});
