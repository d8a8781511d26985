/**
 * May the signed-in user do this? A SelfSubjectAccessReview, asked until the server answers it:
 * the review decides what the page offers (a Create button), so a dropped connection, a 429 or a
 * 5xx (a server busy at sign-in, when the page opens its watches) is asked again after a pause
 * that doubles up to 30 s, as client-go retries a throttled request, instead of hiding the
 * action for the page's life. A 4xx refusal is an answer: not allowed.
 */
import { ApiError, type Api } from './api.js';
import { sleep } from './watch.js';

export interface ResourceAttributes {
  namespace: string;
  verb: string;
  group: string;
  resource: string;
}

const MAX_RETRY_MS = 30_000;

/** Resolves with the review's `allowed`, or undefined once `signal` aborts. `retryMs`: the first pause (default 1 s). */
export async function canI(api: Api, attributes: ResourceAttributes, signal: AbortSignal, retryMs = 1000): Promise<boolean | undefined> {
  const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attributes } };
  for (let wait = retryMs; !signal.aborted; wait = Math.min(wait * 2, MAX_RETRY_MS)) {
    try {
      const r = (await api.send('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', review)) as { status?: { allowed?: boolean } };
      return signal.aborted ? undefined : r.status?.allowed === true;
    } catch (err) {
      if (err instanceof ApiError && err.status !== 429 && err.status < 500) return signal.aborted ? undefined : false;
      await sleep(wait, signal);
    }
  }
  return undefined;
}
