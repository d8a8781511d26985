/**
 * The value transformers of encryption at rest, in kube-apiserver's stored format
 * (k8s.io/apiserver/pkg/storage/value): each stored value starts with `k8s:enc:<provider>:v1:<key name>:`
 * followed by the provider's ciphertext, so a store written by nodelet can be read by
 * kube-apiserver with the same EncryptionConfiguration and the other way round.
 *
 *   aescbc     16-byte IV ‖ AES-CBC(PKCS#7-padded plaintext)            no authenticated data
 *   aesgcm     12-byte nonce ‖ AES-GCM ciphertext ‖ 16-byte tag          the storage key is the AAD
 *   secretbox  24-byte nonce ‖ NaCl secretbox (16-byte tag ‖ ciphertext) no authenticated data
 *   identity   the plaintext itself (refuses to read a `k8s:enc:` value)
 *
 * Reads try every configured provider and key (so a value written with an older key stays
 * readable during a rotation); writes use the first.
 */
import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from 'node:crypto';
import { secretbox } from '@noble/ciphers/salsa.js';

/** Turns a plaintext value into its stored form and back. `key` is the storage key (`/registry/…`). */
export interface ValueTransformer {
  toStorage(data: Uint8Array, key: string): Uint8Array;
  /**
   * The plaintext; `stale` when a provider or key other than the first read it (a write would
   * store it differently). Throws an Error whose message says why the value cannot be read.
   */
  fromStorage(data: Uint8Array, key: string): { value: Uint8Array; stale: boolean };
}

/** The bytes every encrypted value starts with; JSON values start with `{`. */
export const ENCRYPTED_PREFIX = 'k8s:enc:';

const AES_BLOCK = 16;
const GCM_NONCE = 12;
const GCM_TAG = 16;
const SECRETBOX_NONCE = 24;
const SECRETBOX_TAG = 16;
const encoder = new TextEncoder();

/** The AES cipher name for a 16/24/32-byte key (config validation has checked the length). */
function aesName(mode: 'cbc', key: Uint8Array): string;
function aesName(mode: 'gcm', key: Uint8Array): CipherGCMTypes;
function aesName(mode: 'cbc' | 'gcm', key: Uint8Array): string {
  return `aes-${key.length * 8}-${mode}`;
}

/** AES-CBC with a random IV and PKCS#7 padding (upstream's aes.NewCBCTransformer). */
export function aesCbc(key: Uint8Array): ValueTransformer {
  return {
    toStorage(data) {
      const iv = randomBytes(AES_BLOCK);
      const pad = AES_BLOCK - (data.length % AES_BLOCK);
      const padded = Buffer.concat([data, Buffer.alloc(pad, pad)]);
      const cipher = createCipheriv(aesName('cbc', key), key, iv).setAutoPadding(false);
      return Buffer.concat([iv, cipher.update(padded), cipher.final()]);
    },
    fromStorage(data) {
      if (data.length < AES_BLOCK) throw new Error('the stored data was shorter than the required size');
      const body = data.subarray(AES_BLOCK);
      if (body.length % AES_BLOCK !== 0) throw new Error('the stored data is not a multiple of the block size');
      const decipher = createDecipheriv(aesName('cbc', key), key, data.subarray(0, AES_BLOCK)).setAutoPadding(false);
      const plain = Buffer.concat([decipher.update(body), decipher.final()]);
      // The padding is checked by hand to answer upstream's messages (Node's says only "bad decrypt").
      const pad = plain.length ? plain[plain.length - 1]! : 0;
      if (pad === 0 || pad > plain.length) throw new Error('invalid PKCS7 data (empty or not padded)');
      for (let i = plain.length - pad; i < plain.length; i++) {
        if (plain[i] !== pad) throw new Error('invalid padding on input');
      }
      return { value: plain.subarray(0, plain.length - pad), stale: false };
    },
  };
}

/** AES-GCM with a random 96-bit nonce; the storage key is authenticated, so a value copied to another key does not decrypt. */
export function aesGcm(key: Uint8Array): ValueTransformer {
  return {
    toStorage(data, storageKey) {
      const nonce = randomBytes(GCM_NONCE);
      const cipher = createCipheriv(aesName('gcm', key), key, nonce).setAAD(encoder.encode(storageKey));
      return Buffer.concat([nonce, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    },
    fromStorage(data, storageKey) {
      if (data.length < GCM_NONCE + GCM_TAG) throw new Error('the stored data was shorter than the required size');
      const decipher = createDecipheriv(aesName('gcm', key), key, data.subarray(0, GCM_NONCE)).setAAD(encoder.encode(storageKey));
      decipher.setAuthTag(data.subarray(data.length - GCM_TAG));
      try {
        return { value: Buffer.concat([decipher.update(data.subarray(GCM_NONCE, data.length - GCM_TAG)), decipher.final()]), stale: false };
      } catch {
        throw new Error('cipher: message authentication failed');
      }
    },
  };
}

/** XSalsa20-Poly1305 (NaCl secretbox) with a random 24-byte nonce in front. */
export function secretBox(key: Uint8Array): ValueTransformer {
  return {
    toStorage(data) {
      const nonce = randomBytes(SECRETBOX_NONCE);
      return Buffer.concat([nonce, secretbox(key, nonce).seal(data)]);
    },
    fromStorage(data) {
      if (data.length < SECRETBOX_NONCE + SECRETBOX_TAG) throw new Error('the stored data was shorter than the required size');
      try {
        return { value: secretbox(key, data.subarray(0, SECRETBOX_NONCE)).open(data.subarray(SECRETBOX_NONCE)), stale: false };
      } catch {
        // Upstream's message for a failed secretbox.Open.
        throw new Error('output array was not large enough for encryption');
      }
    },
  };
}

/** No encryption; a value that is encrypted is refused so that a later provider may read it. */
export const identity: ValueTransformer = {
  toStorage: (data) => data,
  fromStorage(data) {
    if (startsWith(data, ENCRYPTED_PREFIX_BYTES)) throw new Error('identity transformer tried to read encrypted data');
    return { value: data, stale: false };
  },
};

const ENCRYPTED_PREFIX_BYTES = encoder.encode(ENCRYPTED_PREFIX);

/** One alternative of a {@link prefixChain}: values starting with `prefix` are read by `transformer`. */
export interface PrefixedTransformer {
  prefix: string;
  transformer: ValueTransformer;
}

/**
 * Upstream's prefix transformers: writes use the first entry (its prefix, then its output); a read
 * tries, in order, every entry whose prefix the value starts with (a read by any but the first is
 * stale). An identity entry (empty prefix)
 * that refuses is skipped silently; other failures are collected and reported when nothing reads
 * the value, else `noMatch` is the error.
 */
export function prefixChain(entries: readonly PrefixedTransformer[], noMatch: string): ValueTransformer {
  const prefixed = entries.map((e) => ({ ...e, bytes: encoder.encode(e.prefix) }));
  const first = prefixed[0]!;
  return {
    toStorage(data, key) {
      return Buffer.concat([first.bytes, first.transformer.toStorage(data, key)]);
    },
    fromStorage(data, key) {
      const errors: string[] = [];
      for (const [i, e] of prefixed.entries()) {
        if (!startsWith(data, e.bytes)) continue;
        try {
          const read = e.transformer.fromStorage(data.subarray(e.bytes.length), key);
          return { value: read.value, stale: read.stale || i !== 0 };
        } catch (err) {
          if (e.bytes.length > 0) errors.push((err as Error).message);
        }
      }
      if (errors.length === 1) throw new Error(errors[0]);
      if (errors.length > 1) throw new Error(`[${errors.join(', ')}]`);
      throw new Error(noMatch);
    },
  };
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}
