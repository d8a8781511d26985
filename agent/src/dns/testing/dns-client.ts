/**
 * Test helpers: a DNS client over UDP or TCP, and a fake upstream resolver on loopback that
 * answers from a table and counts what it was asked (never the internet: tests forward here).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type Server } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type RecordType } from 'dns-packet';

export interface AskOptions {
  tcp?: boolean;
  /** Adds an OPT with this UDP size. */
  edns?: number;
  id?: number;
  timeoutMs?: number;
}

/** Sends raw bytes and returns the raw reply (undefined on timeout: the server dropped it). */
export function sendRaw(addr: { ip: string; port: number }, msg: Buffer, o: { tcp?: boolean; timeoutMs?: number } = {}): Promise<Buffer | undefined> {
  const timeoutMs = o.timeoutMs ?? 3000;
  if (o.tcp) {
    return new Promise((resolve, reject) => {
      const sock = connect({ host: addr.ip, port: addr.port });
      let buf = Buffer.alloc(0);
      const timer = setTimeout(() => {
        sock.destroy();
        resolve(undefined);
      }, timeoutMs);
      sock.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      sock.on('close', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      sock.on('data', (c) => {
        buf = Buffer.concat([buf, c]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          clearTimeout(timer);
          const reply = buf.subarray(2, 2 + buf.readUInt16BE(0));
          sock.destroy();
          resolve(Buffer.from(reply));
        }
      });
      const len = Buffer.alloc(2);
      len.writeUInt16BE(msg.length);
      sock.write(Buffer.concat([len, msg]));
    });
  }
  return new Promise((resolve, reject) => {
    const sock = createSocket(addr.ip.includes(':') ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      sock.close();
      resolve(undefined);
    }, timeoutMs);
    sock.on('error', (err) => {
      clearTimeout(timer);
      sock.close();
      reject(err);
    });
    sock.on('message', (m) => {
      clearTimeout(timer);
      sock.close();
      resolve(m);
    });
    sock.send(msg, addr.port, addr.ip);
  });
}

/** Asks `name`/`type` and decodes the reply; throws on timeout. */
export async function ask(addr: { ip: string; port: number }, name: string, type: RecordType, o: AskOptions = {}): Promise<DecodedPacket & { rcode: string; size: number }> {
  const query = dnsPacket.encode({
    type: 'query',
    id: o.id ?? 4242,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type, class: 'IN' }],
    additionals: o.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: o.edns, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [],
  });
  const raw = await sendRaw(addr, query, o);
  if (!raw) throw new Error(`no reply to ${name} ${type} over ${o.tcp ? 'TCP' : 'UDP'}`);
  return Object.assign(dnsPacket.decode(raw) as DecodedPacket & { rcode: string }, { size: raw.length });
}

export interface FakeUpstream {
  address: { ip: string; port: number };
  /** Questions received, as `name type proto`. */
  asked: string[];
  close(): Promise<void>;
}

/** A resolver on 127.0.0.1 (UDP and TCP, one port) answering from `table` (`name type` → answers); other names NXDOMAIN with a SOA. */
export async function startFakeUpstream(table: Record<string, Answer[]>): Promise<FakeUpstream> {
  const asked: string[] = [];
  const reply = (msg: Buffer, proto: string): Buffer | undefined => {
    let q: DecodedPacket;
    try {
      q = dnsPacket.decode(msg);
    } catch {
      return undefined;
    }
    const question = q.questions?.[0];
    if (!question) return undefined;
    asked.push(`${question.name.toLowerCase()} ${question.type} ${proto}`);
    const answers = table[`${question.name.toLowerCase()} ${question.type}`];
    const nx = !answers && !Object.keys(table).some((k) => k.startsWith(`${question.name.toLowerCase()} `));
    return dnsPacket.encode({
      type: 'response',
      id: q.id,
      flags: dnsPacket.RECURSION_AVAILABLE | (q.flags! & dnsPacket.RECURSION_DESIRED) | (nx ? 3 : 0),
      questions: [question],
      answers: answers ?? [],
      authorities: answers ? [] : [{ type: 'SOA', name: 'example.', ttl: 60, class: 'IN', data: { mname: 'ns.example.', rname: 'hostmaster.example.', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 20 } }],
    });
  };
  const udp: UdpSocket = createSocket('udp4');
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  const port = udp.address().port;
  udp.on('message', (m, rinfo) => {
    const out = reply(m, 'udp');
    if (out) udp.send(out, rinfo.port, rinfo.address);
  });
  const tcp: Server = createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('error', () => sock.destroy());
    sock.on('data', (c) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const out = reply(buf.subarray(2, 2 + buf.readUInt16BE(0)), 'tcp');
        buf = buf.subarray(2 + buf.readUInt16BE(0));
        if (!out) continue;
        const len = Buffer.alloc(2);
        len.writeUInt16BE(out.length);
        sock.write(Buffer.concat([len, out]));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    address: { ip: '127.0.0.1', port },
    asked,
    close: async () => {
      await new Promise<void>((r) => tcp.close(() => r()));
      await new Promise<void>((r) => udp.close(() => r()));
    },
  };
}
