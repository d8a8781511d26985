/**
 * Writes a spliced WebSocket's server-to-client bytes (the agent's 101 response, then its frames)
 * so that no single write, and so no TLS record toward the client, holds the end of one frame and
 * the start of the next.
 *
 * Why: python-kubernetes 22.6 polls its raw socket and reads one frame per wake-up. Frames left
 * in its TLS buffer (several in one record) are not seen until more bytes arrive: a port-forward
 * reply behind the initial port frames never reached the application while the session stayed
 * open, and an exec's close frame waited for the connection to end. One frame per write, the next
 * only after the previous was written, keeps records on frame boundaries (Node's TLS socket joins
 * queued writes into one record).
 */
import { Writable } from 'node:stream';
import type { Duplex } from 'node:stream';

const HEAD_END = Buffer.from('\r\n\r\n');
/** The longest frame header: 2 bytes, an 8-byte length, a 4-byte mask. */
const MAX_HEADER = 14;

/** A frame's header length and payload length, or undefined while `b` holds too little of it. */
function frameHeader(b: Buffer): { header: number; payload: number } | undefined {
  if (b.length < 2) return undefined;
  const len7 = b[1]! & 0x7f;
  const mask = b[1]! & 0x80 ? 4 : 0;
  const ext = len7 === 126 ? 2 : len7 === 127 ? 8 : 0;
  if (b.length < 2 + ext + mask) return undefined;
  const payload = ext === 2 ? b.readUInt16BE(2) : ext === 8 ? Number(b.readBigUInt64BE(2)) : len7;
  return { header: 2 + ext + mask, payload };
}

/**
 * A Writable to pipe the agent's side into: the response head goes through as it came; after a
 * 101, each write to `out` is one frame's bytes (a large frame may take several writes) and waits
 * for the previous one. Anything else than a 101 is passed through untouched.
 */
export function webSocketFrameWriter(out: Duplex): Writable {
  let head: Buffer | undefined = Buffer.alloc(0); // until the end of the response head
  let raw = false; // not a 101: plain bytes
  let pending = Buffer.alloc(0); // the start of a frame header
  let remaining = 0; // payload bytes of the current frame still to come
  const send = (b: Buffer): Promise<void> => new Promise((resolve, reject) => out.write(b, (err) => (err ? reject(err) : resolve())));
  const writeFrames = async (chunk: Buffer): Promise<void> => {
    let rest = chunk;
    while (rest.length) {
      if (remaining > 0) {
        const piece = rest.subarray(0, remaining);
        remaining -= piece.length;
        rest = rest.subarray(piece.length);
        await send(piece);
        continue;
      }
      const buf = Buffer.concat([pending, rest.subarray(0, MAX_HEADER)]);
      const h = frameHeader(buf);
      if (!h) {
        pending = buf;
        rest = rest.subarray(MAX_HEADER);
        continue;
      }
      // The header (and as much of the payload as is here) in one write.
      const fromRest = h.header - pending.length;
      const take = Math.min(rest.length - fromRest, h.payload);
      const piece = Buffer.concat([pending, rest.subarray(0, fromRest + take)]);
      pending = Buffer.alloc(0);
      remaining = h.payload - take;
      rest = rest.subarray(fromRest + take);
      await send(piece);
    }
  };
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      let data = chunk;
      let first = Promise.resolve();
      if (head) {
        const all = Buffer.concat([head, data]);
        const end = all.indexOf(HEAD_END);
        if (end < 0) {
          head = all;
          return cb();
        }
        head = undefined;
        raw = !/^HTTP\/1\.[01] 101 /.test(all.subarray(0, 16).toString('latin1'));
        // The head alone too: a client reading it byte by byte must not find a frame behind it.
        first = send(all.subarray(0, end + HEAD_END.length));
        data = all.subarray(end + HEAD_END.length);
      }
      first
        .then(() => (raw ? (data.length ? send(data) : undefined) : writeFrames(data)))
        .then(() => cb(), (err: Error) => cb(err));
    },
    final(cb) {
      if (head?.length) out.write(head);
      out.end(() => cb());
    },
  });
}
