/**
 * Ensures a container's image is present, honouring `imagePullPolicy`, with a pull backoff per pod
 * and image (kubelet images/image_manager.go: 10 s doubling to 300 s) and a bound on concurrent
 * pulls (`serializeImagePulls` / `maxParallelImagePulls`; the event loop and the registry are shared).
 *
 * The backoff is keyed by pod UID and image, as kubelet keys it, not by image alone: pods that
 * queued behind one another for the same image while the registry was away would each count a
 * failure against one shared entry, and five of them in a row pushed every pod of that image to a
 * 160 s wait (found by the soak, docs/reliability.md).
 *
 * Errors carry the kubelet's waiting reasons through codes:
 *   ERR_IMAGE_PULL_BACKOFF   → "ImagePullBackOff" (still inside the backoff window; no pull made)
 *   other                    → "ErrImagePull" (this pull failed)
 *   ERR_FAILED_PRECONDITION  → "ErrImageNeverPull" (policy Never, image absent)
 *
 * Credentials (kubelet kuberuntime_image.go): the pod's pull secrets are read only when a pull is
 * due; every credential the keyring matches is tried in turn (the first success wins, the errors
 * of all are reported together); only an image no credential matches is pulled anonymously.
 */
import { AgentError, Backoff, Semaphore, describeError, type Clock } from '@nodelet/base';
import type { Container } from '@nodelet/api/agent';
import type { ImageService } from '../kubecontainer/cri.js';
import { DockerKeyring, repositoryToPull, type RegistryAuth } from './keyring.js';

export interface ImageEvents {
  pulling(image: string): void;
  pulled(image: string, message: string): void;
  failed(image: string, reason: string, message: string): void;
}

export interface ImageManagerOptions {
  images: ImageService;
  clock: Clock;
  maxParallelPulls: number;
  pullTimeoutMs?: number;
  /** Called after each successful pull: the node's image list has changed (node/image-inventory.ts). */
  onPulled?(): void;
}

/** Default policy as the API server defaults it: Always for `:latest` or no tag, else IfNotPresent. */
export function effectivePullPolicy(c: Container): 'Always' | 'IfNotPresent' | 'Never' {
  if (c.imagePullPolicy) return c.imagePullPolicy;
  const image = c.image ?? '';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  if (image.includes('@')) return 'IfNotPresent';
  if (!lastSegment.includes(':') || lastSegment.endsWith(':latest')) return 'Always';
  return 'IfNotPresent';
}

/** The credentials to try for `image`; none for a reference the keyring cannot read (the pull reports it). */
function credentialsFor(image: string, keyring: DockerKeyring | undefined): RegistryAuth[] {
  if (!keyring) return [];
  let repo: string;
  try {
    repo = repositoryToPull(image);
  } catch {
    return [];
  }
  return keyring.lookup(repo);
}

export class ImageManager {
  readonly #o: ImageManagerOptions;
  readonly #backoff: Backoff;
  readonly #pulls: Semaphore;

  constructor(o: ImageManagerOptions) {
    this.#o = o;
    this.#backoff = new Backoff({ initialMs: 10_000, maxMs: 300_000, clock: o.clock });
    this.#pulls = new Semaphore(o.maxParallelPulls);
  }

  /**
   * Returns the image reference (ID) to create container `c` of pod `podUid` with. `keyring`
   * gives the pod's pull credentials; it is called only when the image is to be pulled.
   */
  async ensureImage(podUid: string, c: Container, events: ImageEvents, signal: AbortSignal, keyring?: () => Promise<DockerKeyring>): Promise<string> {
    const image = c.image;
    if (!image) throw new AgentError('ERR_INVALID_ARGUMENT', `container "${c.name}" has no image`);
    const key = `${podUid}_${image}`;
    const policy = effectivePullPolicy(c);
    if (policy !== 'Always') {
      const present = await this.#status(image, signal);
      if (present) return present;
      if (policy === 'Never') {
        const msg = `Container image "${image}" is not present with pull policy of Never`;
        events.failed(image, 'ErrImageNeverPull', msg);
        throw new AgentError('ERR_FAILED_PRECONDITION', msg);
      }
    }
    if (this.#backoff.isInBackoff(key)) {
      const msg = `Back-off pulling image "${image}"`;
      throw new AgentError('ERR_IMAGE_PULL_BACKOFF', msg);
    }
    events.pulling(image);
    const started = this.#o.clock.monotonic();
    try {
      // Queued behind other pulls (serializeImagePulls) until a permit is free or the pod goes.
      const creds = credentialsFor(image, keyring ? await keyring() : undefined);
      const pull = () => this.#pullWith(image, creds, signal);
      const res = await this.#pulls.use(pull, signal);
      this.#backoff.reset(key);
      this.#o.onPulled?.();
      const took = ((this.#o.clock.monotonic() - started) / 1000).toFixed(3);
      events.pulled(image, `Successfully pulled image "${image}" in ${took}s`);
      return (await this.#status(image, signal)) ?? res.imageRef;
    } catch (err) {
      if (signal.aborted) throw err;
      this.#backoff.next(key);
      const msg = `Failed to pull image "${image}": ${describeError(err)}`;
      events.failed(image, 'Failed', msg);
      throw new AgentError('ERR_UNAVAILABLE', msg, { cause: err, retryable: true });
    }
  }

  /** One pull per credential until one succeeds; anonymous when there are none. */
  async #pullWith(image: string, creds: RegistryAuth[], signal: AbortSignal): Promise<{ imageRef: string }> {
    if (creds.length === 0) return this.#o.images.pullImage({ image: { image } }, { signal, timeoutMs: this.#o.pullTimeoutMs });
    const errors: string[] = [];
    for (const auth of creds) {
      try {
        return await this.#o.images.pullImage({ image: { image }, auth: { username: auth.username, password: auth.password } }, { signal, timeoutMs: this.#o.pullTimeoutMs });
      } catch (err) {
        if (signal.aborted) throw err;
        errors.push(describeError(err));
      }
    }
    // Go's aggregate error: one error as it is, several in brackets.
    throw new AgentError('ERR_UNAVAILABLE', errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);
  }

  /** Drops the pull backoff of a pod that is gone. */
  forget(podUid: string): void {
    this.#backoff.forgetPrefix(`${podUid}_`);
  }

  /**
   * The user image `imageRef` runs as (kubelet getImageUser): a numeric uid, a name, or neither
   * (no USER: root). Throws ERR_NOT_FOUND when the image is gone.
   */
  async imageUser(imageRef: string, signal: AbortSignal): Promise<{ uid?: number; username?: string }> {
    const st = await this.#o.images.imageStatus({ image: { image: imageRef } }, { signal });
    if (!st.image) throw new AgentError('ERR_NOT_FOUND', `image ${imageRef} is not present`);
    if (st.image.uid) return { uid: Number(st.image.uid.value) };
    return st.image.username ? { username: st.image.username } : {};
  }

  /** The image ID when present, else undefined. */
  async #status(image: string, signal: AbortSignal): Promise<string | undefined> {
    const st = await this.#o.images.imageStatus({ image: { image } }, { signal });
    return st.image?.id || undefined;
  }
}
