// A stand-in pod process for the service proxy tests, run inside a test network namespace with
// `ip netns exec`. Plain JavaScript so it starts without tsx.
//
//   serve --name N [--tcp PORT] [--udp PORT]      HTTP and UDP servers answering N; prints "ready"
//   http --url U [--count C] [--timeout MS]       C sequential GETs; prints JSON [{ ok, body | code, ms }]
//   http-until-ok --url U --within MS             GET every 50 ms until one answers; prints { ok, ms, body }
//   udp --host H --port P [--sport S] [--count C] [--timeout MS]   C datagrams from one source port; prints JSON
//   connect --host H --port P [--count C]        C sequential TCP connects; prints JSON [ms | null]
import http from 'node:http';
import net from 'node:net';
import dgram from 'node:dgram';

const [mode, ...rest] = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = rest.indexOf(`--${name}`);
  return i >= 0 ? rest[i + 1] : dflt;
};

function get(url, timeoutMs) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ ok: true, body, ms: performance.now() - t0 }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err) => resolve({ ok: false, code: err.code ?? err.message, ms: performance.now() - t0 }));
  });
}

if (mode === 'serve') {
  const name = arg('name');
  const tcp = arg('tcp');
  const udp = arg('udp');
  let pending = 0;
  const ready = () => {
    if (--pending === 0) process.stdout.write('ready\n');
  };
  if (tcp) {
    pending++;
    http.createServer((req, res) => res.end(`${name} ${req.socket.remoteAddress}`)).listen(Number(tcp), '0.0.0.0', ready);
  }
  if (udp) {
    pending++;
    const s = dgram.createSocket('udp4');
    s.on('message', (msg, rinfo) => s.send(`${name} ${rinfo.address}`, rinfo.port, rinfo.address));
    s.bind(Number(udp), '0.0.0.0', ready);
  }
  process.on('SIGTERM', () => process.exit(0));
} else if (mode === 'http') {
  const out = [];
  for (let i = 0; i < Number(arg('count', '1')); i++) out.push(await get(arg('url'), Number(arg('timeout', '3000'))));
  process.stdout.write(JSON.stringify(out));
} else if (mode === 'http-until-ok') {
  const t0 = performance.now();
  const within = Number(arg('within', '5000'));
  let last;
  while (performance.now() - t0 < within) {
    last = await get(arg('url'), 500);
    if (last.ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  process.stdout.write(JSON.stringify({ ...last, ms: performance.now() - t0 }));
} else if (mode === 'udp') {
  const s = dgram.createSocket('udp4');
  await new Promise((r) => s.bind(Number(arg('sport', '0')), r));
  const out = [];
  for (let i = 0; i < Number(arg('count', '1')); i++) {
    const t0 = performance.now();
    out.push(await new Promise((resolve) => {
      const timer = setTimeout(() => {
        s.off('message', onMsg);
        resolve({ ok: false, code: 'ETIMEDOUT', ms: performance.now() - t0 });
      }, Number(arg('timeout', '1000')));
      const onMsg = (msg) => {
        clearTimeout(timer);
        resolve({ ok: true, body: msg.toString(), ms: performance.now() - t0 });
      };
      s.once('message', onMsg);
      s.send('ping', Number(arg('port')), arg('host'));
    }));
  }
  s.close();
  process.stdout.write(JSON.stringify(out));
} else if (mode === 'connect') {
  const out = [];
  for (let i = 0; i < Number(arg('count', '1')); i++) {
    const t0 = performance.now();
    out.push(await new Promise((resolve) => {
      const c = net.connect({ host: arg('host'), port: Number(arg('port')), timeout: 2000 });
      c.once('connect', () => {
        const ms = performance.now() - t0;
        c.destroy();
        resolve(ms);
      });
      c.once('error', () => resolve(null));
      c.once('timeout', () => {
        c.destroy();
        resolve(null);
      });
    }));
  }
  process.stdout.write(JSON.stringify(out));
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
