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
    ws.run_forever(timeout=20)
    assert not ws.is_open()
    assert ws.read_stdout() == 'out\n'
    assert ws.read_stderr() == 'err\n'
    assert ws.returncode == 3


def test_exec_closes_promptly_with_a_close_frame(core):
    # Each session ends with a WebSocket close frame soon after the status: the client's loop
    # stops on the close opcode (a connection dropped without one raises instead). 20 s is well
    # under ws's 30 s close timeout, which is what these sessions used to wait for.
    for i in range(8):
        ws = stream(core.connect_get_namespaced_pod_exec, 'tools', NS, command=['echo', str(i)],
                    stdout=True, stderr=True, stdin=False, tty=False, _preload_content=False)
        start = time.monotonic()
        ws.run_forever(timeout=20)
        assert not ws.is_open(), 'exec %d still open after %.1f s' % (i, time.monotonic() - start)
        assert ws.read_stdout() == '%d\n' % i
        assert ws.returncode == 0


def test_exec_stdin(core):
    ws = stream(core.connect_get_namespaced_pod_exec, 'tools', NS,
                command=['sh', '-c', 'read line; echo "got:$line"'],
                stdout=True, stderr=True, stdin=True, tty=False, _preload_content=False)
    ws.write_stdin('hello\n')
    ws.run_forever(timeout=20)
    assert not ws.is_open()
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


def _http_get(sock, body):
    # One HTTP/1.0 exchange, read until the expected body: on a multi-port session a port's
    # socket only reports EOF once the whole WebSocket has closed (as with kubelet).
    sock.setblocking(True)
    sock.settimeout(20)
    sock.sendall(b'GET /index.html HTTP/1.0\r\nHost: web\r\n\r\n')
    data = b''
    while not data.endswith(body):
        chunk = sock.recv(65536)
        assert chunk, 'EOF after %r' % data
        data += chunk
    assert b' 200 ' in data.split(b'\r\n', 1)[0], data


def _wait_closed(pf):
    deadline = time.monotonic() + 20
    while pf.connected:
        assert time.monotonic() < deadline, 'the port-forward session is still open'
        time.sleep(0.05)


def test_port_forward_two_ports_on_one_session(core):
    # One WebSocket, two ports (a data and an error channel each). Each port has its own
    # connection: one's ending does not end the other, and the session closes once both have.
    # Replies sat unread when the port frames shared a TLS record with them (one frame per record
    # now), whichever port was used first.
    for ports, order in (('8080,8081', (8081, 8080)), ('8080,8081', (8080, 8081)), ('8081,8080', (8081, 8080))):
        pf = portforward(core.connect_get_namespaced_pod_portforward, 'web', NS, ports=ports)
        for port in order:
            _http_get(pf.socket(port), b'hello-%d\n' % port)
        _wait_closed(pf)
        assert pf.error(8080) is None and pf.error(8081) is None


def test_port_forward_a_refused_port_beside_a_working_one(core):
    # Nothing listens on 9999: its error channel says so; 8080 on the same session still works,
    # and so does a later session.
    pf = portforward(core.connect_get_namespaced_pod_portforward, 'web', NS, ports='8080,9999')
    _http_get(pf.socket(8080), b'hello-8080\n')
    _wait_closed(pf)
    assert pf.error(8080) is None
    assert '9999' in (pf.error(9999) or ''), pf.error(9999)
    pf = portforward(core.connect_get_namespaced_pod_portforward, 'web', NS, ports='8080')
    _http_get(pf.socket(8080), b'hello-8080\n')


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
