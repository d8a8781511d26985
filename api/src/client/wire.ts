/**
 * Protobuf on the read path, as kubelet asks for it: list and watch send
 * `Accept: application/vnd.kubernetes.protobuf, application/json` and decode the reply by its
 * Content-Type (the server answers JSON for kinds it has no protobuf table for).
 *
 * A reply this client cannot decode losslessly (a protobuf object with fields our tables lack,
 * as a newer server may send) switches that resource to JSON for the life of the client; the
 * list is retried at once, a watch ends retryably and the informer re-watches from its last
 * resourceVersion, so no event is lost.
 */
import { AgentError, hasCode } from '@nodelet/base';
import { decodeProtobufList } from '../protobuf/decode-stream.js';
import type { ResponseHeaders } from './transport.js';

export const PROTOBUF_ACCEPT = 'application/vnd.kubernetes.protobuf, application/json';
const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';

/** Whether a reply's Content-Type is Kubernetes protobuf (`;stream=watch` included). */
export function isProtobufReply(headers: ResponseHeaders): boolean {
  const ct = headers['content-type'];
  const value = Array.isArray(ct) ? ct[0] : ct;
  return (value ?? '').split(';')[0]!.trim().toLowerCase() === PROTOBUF_TYPE;
}

/** Which resources still ask for protobuf; one per ApiClient. */
export class WirePreference {
  readonly #enabled: boolean;
  readonly #jsonOnly = new Set<string>();

  constructor(enabled: boolean) {
    this.#enabled = enabled;
  }

  /** The Accept header for a list or watch of `resourceKey` (undefined: the transport's JSON default). */
  acceptFor(resourceKey: string): string | undefined {
    return this.#enabled && !this.#jsonOnly.has(resourceKey) ? PROTOBUF_ACCEPT : undefined;
  }

  /** Asks for JSON for `resourceKey` from now on. */
  useJson(resourceKey: string): void {
    this.#jsonOnly.add(resourceKey);
  }
}

/**
 * A list reply's body as the JSON list shape. Throws ERR_UNIMPLEMENTED when the protobuf body
 * holds fields the tables lack (the caller asks again for JSON), ERR_INTERNAL when malformed.
 */
export function decodeListBody<L>(headers: ResponseHeaders, body: Buffer, what: string): L {
  if (isProtobufReply(headers)) {
    try {
      return decodeProtobufList(body) as L;
    } catch (err) {
      if (hasCode(err, 'ERR_UNIMPLEMENTED')) throw err;
      throw new AgentError('ERR_INTERNAL', `${what}: API server sent a malformed protobuf list`, { cause: err });
    }
  }
  try {
    return JSON.parse(body.toString('utf8')) as L;
  } catch (err) {
    throw new AgentError('ERR_INTERNAL', `${what}: API server sent a reply that is not JSON`, { cause: err });
  }
}
