# The official Python client (Debian's python3-kubernetes) against a lab node, run by pytest from
# python-client-lab.itest.ts with NODELET_KUBECONFIG set: exec through kubernetes.stream (WebSocket v4.channel.k8s.io),
# port-forward through kubernetes.stream.portforward, pod logs, and namespace deletion. The itest
# created pod "tools" (a shell), pod "web" (httpd on 8080) and pod "talker" (prints two lines,
# then sleeps) in NODELET_NS and waited for them.
import os
import time
import uuid

import pytest
from kubernetes import client, config
from kubernetes.stream import portforward, stream

NS = os.environ.get('NODELET_NS', 'default')


@pytest.fixture(scope='session')
def core():
    # The lab's admin kubeconfig (client certificate, the cluster CA verified), as a user has it.
    return client.CoreV1Api(config.new_client_from_config(config_file=os.environ['NODELET_KUBECONFIG']))


def test_exec_stdout_stderr_and_exit_code(core):
    ws = stream(core.connect_get_namespaced_pod_exec, 'tools', NS,
                command=['sh', '-c', 'echo out; echo err >&2; exit 3'],
                stdout=True, stderr=True, stdin=False, tty=False, _preload_content=False)
    ws.run_forever(timeout=60)
    assert ws.read_stdout() == 'out\n'
    assert ws.read_stderr() == 'err\n'
    assert ws.returncode == 3


def test_exec_stdin(core):
    ws = stream(core.connect_get_namespaced_pod_exec, 'tools', NS,
                command=['sh', '-c', 'read line; echo "got:$line"'],
                stdout=True, stderr=True, stdin=True, tty=False, _preload_content=False)
    ws.write_stdin('hello\n')
    ws.run_forever(timeout=60)
    assert ws.read_stdout() == 'got:hello\n'
    assert ws.returncode == 0


def test_exec_preloaded_output(core):
    # The default (_preload_content=True): the whole output as one string.
    out = stream(core.connect_get_namespaced_pod_exec, 'tools', NS, command=['echo', 'a', 'b'],
                 stdout=True, stderr=True, stdin=False, tty=False)
    assert out == 'a b\n'


def test_exec_with_a_tty(core):
    out = stream(core.connect_get_namespaced_pod_exec, 'tools', NS, command=['sh', '-c', 'tty; echo done'],
                 stdout=True, stderr=False, stdin=False, tty=True)
    # A terminal: the pts device, and the line discipline's CR LF.
    assert out.startswith('/dev/pts/'), out
    assert out.endswith('done\r\n'), out


def test_pod_logs(core):
    assert core.read_namespaced_pod_log('talker', NS) == 'line1\nline2\n'
    assert core.read_namespaced_pod_log('talker', NS, tail_lines=1) == 'line2\n'
    stamped = core.read_namespaced_pod_log('talker', NS, timestamps=True).splitlines()
    assert [line.split(' ', 1)[1] for line in stamped] == ['line1', 'line2']
    # follow=True streams; the first lines arrive while the container still runs.
    r = core.read_namespaced_pod_log('talker', NS, follow=True, _preload_content=False)
    got = b''
    for chunk in r.stream(64):
        got += chunk
        if got.count(b'\n') >= 2:
            break
    r.release_conn()
    assert got == b'line1\nline2\n'


def test_port_forward(core):
    pf = portforward(core.connect_get_namespaced_pod_portforward, 'web', NS, ports='8080')
    sock = pf.socket(8080)
    sock.setblocking(True)
    sock.sendall(b'GET /index.html HTTP/1.0\r\nHost: web\r\n\r\n')
    data = b''
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    assert data.startswith(b'HTTP/1.') and b' 200 ' in data.split(b'\r\n', 1)[0]
    assert data.endswith(b'hello-8080\n')
    assert pf.error(8080) is None


def test_namespace_deletion_waits_until_gone(core):
    name = 'py-' + uuid.uuid4().hex[:8]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    core.create_namespaced_config_map(name, client.V1ConfigMap(metadata=client.V1ObjectMeta(name='c'), data={'a': '1'}))
    core.delete_namespace(name)
    # Terminating until the namespace controller has emptied it, then gone (404).
    deadline = time.monotonic() + 60
    while True:
        try:
            phase = core.read_namespace(name).status.phase
            assert phase == 'Terminating'
        except client.ApiException as e:
            assert e.status == 404
            break
        assert time.monotonic() < deadline, 'namespace still there after 60 s'
        time.sleep(0.2)
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_config_map('c', name)
    assert err.value.status == 404
