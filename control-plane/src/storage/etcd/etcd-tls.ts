/**
 * TLS material for the etcd client from kube-apiserver's flags `--etcd-cafile`,
 * `--etcd-certfile` and `--etcd-keyfile`. Everything that would only fail later, inside gRPC,
 * as an opaque "connection failed" (an unreadable file, a key that is not the certificate's, a
 * CA file without a certificate) is refused here, at start, naming the flag.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { AgentError } from '@nodelet/base';
import { pairMismatch } from '../../pki/pair.js';

/** Paths given on the command line; each is optional on its own. */
export interface EtcdTlsFiles {
  /** CA bundle that signed etcd's serving certificate (default: the system roots). */
  caFile?: string;
  /** Client certificate, for etcd's `--client-cert-auth`. Needs `keyFile`. */
  certFile?: string;
  keyFile?: string;
}

/** The PEM contents the etcd client is built with. */
export interface EtcdTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** True when any of the three flags is set (so the connection must use TLS). */
export function wantsEtcdTls(files: EtcdTlsFiles | undefined): boolean {
  return !!(files?.caFile || files?.certFile || files?.keyFile);
}

/**
 * Checks the combination of flags without touching the disk: a certificate and its key come
 * together. Throws ERR_INVALID_ARGUMENT.
 */
export function checkEtcdTlsFlags(files: EtcdTlsFiles): void {
  if (!!files.certFile !== !!files.keyFile) {
    throw invalid('--etcd-certfile and --etcd-keyfile must be given together (a client certificate needs its key)');
  }
}

/** Reads and checks the files (synchronously: this runs once, at start, before serving). */
export function loadEtcdTls(files: EtcdTlsFiles): EtcdTls {
  checkEtcdTlsFlags(files);
  const out: EtcdTls = {};
  if (files.caFile) {
    out.ca = read('--etcd-cafile', files.caFile);
    try {
      new X509Certificate(out.ca);
    } catch (err) {
      throw invalid(`--etcd-cafile "${files.caFile}" holds no PEM certificate`, err);
    }
  }
  if (files.certFile && files.keyFile) {
    out.cert = read('--etcd-certfile', files.certFile);
    out.key = read('--etcd-keyfile', files.keyFile);
    const why = pairMismatch(out.cert, out.key);
    if (why) throw invalid(`--etcd-certfile "${files.certFile}" and --etcd-keyfile "${files.keyFile}" do not form a pair: ${why}`);
  }
  return out;
}

function read(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw invalid(`cannot read ${flag} "${path}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, err);
  }
}

function invalid(message: string, cause?: unknown): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', message, cause === undefined ? undefined : { cause });
}
