# The official Python client (Debian's python3-kubernetes) against a nodelet API server, run by
# pytest from python-client.itest.ts with NODELET_API_URL and NODELET_API_TOKEN set. Each test
# works in a namespace of its own, so the order of tests does not matter.
import os
import tempfile
import uuid

import pytest
from kubernetes import client, utils, watch


@pytest.fixture(scope='session')
def api_client():
    cfg = client.Configuration()
    cfg.host = os.environ['NODELET_API_URL']
    cfg.api_key = {'authorization': 'Bearer ' + os.environ['NODELET_API_TOKEN']}
    return client.ApiClient(cfg)


@pytest.fixture
def ns(api_client):
    name = 'py-' + uuid.uuid4().hex[:8]
    client.CoreV1Api(api_client).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name


MULTI_DOC = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: main
        image: busybox:1.36
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
rules:
- apiGroups: ['']
  resources: [configmaps]
  verbs: [get, list]
"""

# What `kubectl get svc,sa -o yaml` writes: one kind: List holding objects of several kinds.
LIST_DOC = """
apiVersion: v1
kind: List
metadata: {}
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: front
  spec:
    selector: {app: web}
    ports:
    - port: 80
      targetPort: 8080
- apiVersion: v1
  kind: ServiceAccount
  metadata:
    name: robot
"""


def write_yaml(text):
    f = tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False)
    f.write(text)
    f.close()
    return f.name


def create_from_text(api_client, text, ns):
    path = write_yaml(text)
    try:
        return utils.create_from_yaml(api_client, path, namespace=ns)
    finally:
        os.unlink(path)


def test_create_from_yaml_multi_document(api_client, ns):
    created = create_from_text(api_client, MULTI_DOC, ns)
    kinds = sorted(o.kind for group in created for o in group)
    assert kinds == ['ConfigMap', 'Deployment', 'Role']
    assert client.CoreV1Api(api_client).read_namespaced_config_map('settings', ns).data == {'mode': 'fast'}
    assert client.AppsV1Api(api_client).read_namespaced_deployment('web', ns).spec.replicas == 2
    assert client.RbacAuthorizationV1Api(api_client).read_namespaced_role('reader', ns).rules[0].verbs == ['get', 'list']


def test_create_from_yaml_kind_list(api_client, ns):
    create_from_text(api_client, LIST_DOC, ns)
    core = client.CoreV1Api(api_client)
    assert core.read_namespaced_service('front', ns).spec.ports[0].port == 80
    assert core.read_namespaced_service_account('robot', ns).metadata.name == 'robot'


def test_create_from_yaml_reports_an_existing_object(api_client, ns):
    create_from_text(api_client, LIST_DOC, ns)
    with pytest.raises(utils.FailToCreateError) as err:
        create_from_text(api_client, LIST_DOC, ns)
    statuses = sorted(e.status for e in err.value.api_exceptions)
    assert statuses == [409, 409]


def two_container_deployment(api_client, ns):
    apps = client.AppsV1Api(api_client)
    containers = [client.V1Container(name='main', image='busybox:1.36'), client.V1Container(name='side', image='busybox:1.36')]
    apps.create_namespaced_deployment(ns, client.V1Deployment(
        metadata=client.V1ObjectMeta(name='web', labels={'tier': 'front', 'team': 'a'}),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels={'app': 'web'}),
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={'app': 'web'}), spec=client.V1PodSpec(containers=containers)),
        ),
    ))
    return apps


def test_patch_with_a_dict_is_a_strategic_merge(api_client, ns):
    # The generated patch methods offer json-patch first; the REST layer turns it into
    # strategic-merge-patch+json whenever the body is not a list. A strategic merge merges the
    # containers list by name: "side" stays.
    apps = two_container_deployment(api_client, ns)
    patched = apps.patch_namespaced_deployment('web', ns, {'spec': {'template': {'spec': {'containers': [{'name': 'main', 'image': 'busybox:1.37'}]}}}})
    assert [(c.name, c.image) for c in patched.spec.template.spec.containers] == [('main', 'busybox:1.37'), ('side', 'busybox:1.36')]


def test_patch_with_a_list_is_a_json_patch(api_client, ns):
    apps = two_container_deployment(api_client, ns)
    patched = apps.patch_namespaced_deployment('web', ns, [
        {'op': 'test', 'path': '/spec/template/spec/containers/1/name', 'value': 'side'},
        {'op': 'remove', 'path': '/spec/template/spec/containers/1'},
        {'op': 'replace', 'path': '/metadata/labels/team', 'value': 'b'},
    ])
    assert [c.name for c in patched.spec.template.spec.containers] == ['main']
    assert patched.metadata.labels == {'tier': 'front', 'team': 'b'}
    # A failed `test` operation changes nothing and is refused.
    with pytest.raises(client.ApiException) as err:
        apps.patch_namespaced_deployment('web', ns, [{'op': 'test', 'path': '/metadata/labels/team', 'value': 'zzz'}, {'op': 'remove', 'path': '/metadata/labels'}])
    assert err.value.status == 422
    assert apps.read_namespaced_deployment('web', ns).metadata.labels == {'tier': 'front', 'team': 'b'}


def test_json_merge_patch_replaces_lists_and_null_removes(api_client, ns):
    # The client has no switch for merge-patch+json: the caller sets the header (what
    # kubernetes' own examples do through call_api).
    apps = two_container_deployment(api_client, ns)
    body = {'metadata': {'labels': {'team': None}}, 'spec': {'template': {'spec': {'containers': [{'name': 'only', 'image': 'busybox:1.37'}]}}}}
    api_client.call_api(
        '/apis/apps/v1/namespaces/{namespace}/deployments/{name}', 'PATCH',
        path_params={'namespace': ns, 'name': 'web'}, body=body,
        header_params={'Content-Type': 'application/merge-patch+json', 'Accept': 'application/json'},
        auth_settings=['BearerToken'], response_type='V1Deployment', _return_http_data_only=True)
    got = apps.read_namespaced_deployment('web', ns)
    assert [(c.name, c.image) for c in got.spec.template.spec.containers] == [('only', 'busybox:1.37')]
    assert got.metadata.labels == {'tier': 'front'}


def test_patch_of_the_status_subresource(api_client, ns):
    apps = two_container_deployment(api_client, ns)
    patched = apps.patch_namespaced_deployment_status('web', ns, {'status': {'observedGeneration': 7}})
    assert patched.status.observed_generation == 7
    # The main resource ignores status: a spec-only patch there leaves it as it was.
    apps.patch_namespaced_deployment('web', ns, {'status': {'observedGeneration': 9}})
    assert apps.read_namespaced_deployment_status('web', ns).status.observed_generation == 7


def test_list_pages_and_label_selector(api_client, ns):
    core = client.CoreV1Api(api_client)
    for i in range(5):
        core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name='c%d' % i, labels={'odd': str(i % 2 == 1).lower()})))
    names, token = [], None
    while True:
        page = core.list_namespaced_config_map(ns, limit=2, _continue=token)
        assert len(page.items) <= 2
        names += [c.metadata.name for c in page.items]
        token = page.metadata._continue
        if not token:
            break
    assert names == ['c0', 'c1', 'c2', 'c3', 'c4']
    assert [c.metadata.name for c in core.list_namespaced_config_map(ns, label_selector='odd=true').items] == ['c1', 'c3']
    assert [c.metadata.name for c in core.list_namespaced_config_map(ns, field_selector='metadata.name=c2').items] == ['c2']


def test_watch_ends_after_timeout_seconds(api_client, ns):
    # The server closes the watch after timeoutSeconds; the client's loop then returns.
    core = client.CoreV1Api(api_client)
    events = list(watch.Watch().stream(core.list_namespaced_config_map, ns, timeout_seconds=1, allow_watch_bookmarks=True))
    assert [e['type'] for e in events if e['type'] != 'BOOKMARK'] == []


def test_delete_options_in_the_body(api_client, ns):
    # The client sends V1DeleteOptions as the DELETE body: a precondition that does not hold refuses.
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name='guarded')))
    with pytest.raises(client.ApiException) as err:
        core.delete_namespaced_config_map('guarded', ns, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid='not-the-uid')))
    assert err.value.status == 409
    status = core.delete_namespaced_config_map('guarded', ns, body=client.V1DeleteOptions(propagation_policy='Background', grace_period_seconds=0))
    assert status.status == 'Success'
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_config_map('guarded', ns)
    assert err.value.status == 404


def test_scale_subresource(api_client, ns):
    apps = two_container_deployment(api_client, ns)
    scale = apps.read_namespaced_deployment_scale('web', ns)
    assert (scale.kind, scale.spec.replicas) == ('Scale', 1)
    # A dict body: strategic merge on the autoscaling/v1 Scale.
    patched = apps.patch_namespaced_deployment_scale('web', ns, {'spec': {'replicas': 3}})
    assert patched.spec.replicas == 3
    scale = apps.read_namespaced_deployment_scale('web', ns)
    scale.spec.replicas = 4
    assert apps.replace_namespaced_deployment_scale('web', ns, scale).spec.replicas == 4
    assert apps.read_namespaced_deployment('web', ns).spec.replicas == 4


def test_eviction_of_an_unscheduled_pod(api_client, ns):
    core = client.CoreV1Api(api_client)
    # No controllers run here: the service account admission wants the namespace's default one.
    core.create_namespaced_service_account(ns, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name='default')))
    core.create_namespaced_pod(ns, client.V1Pod(metadata=client.V1ObjectMeta(name='p'), spec=client.V1PodSpec(containers=[client.V1Container(name='c', image='busybox')])))
    core.create_namespaced_pod_eviction('p', ns, client.V1Eviction(metadata=client.V1ObjectMeta(name='p', namespace=ns)))
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_pod('p', ns)
    assert err.value.status == 404
