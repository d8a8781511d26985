/**
 * Splits a watch body (one JSON object per line, chunk boundaries anywhere, UTF-8 characters
 * possibly split across chunks) into parsed values.
 */
import { StringDecoder } from 'node:string_decoder';
import { AgentError } from '@nodelet/base';

export async function* parseJsonLines(chunks: AsyncIterable<Buffer | string>, what: string): AsyncGenerator<unknown> {
  const decoder = new StringDecoder('utf8');
  let buffered = '';
  for await (const chunk of chunks) {
    buffered += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() !== '') yield parseLine(line, what);
    }
  }
  buffered += decoder.end();
  if (buffered.trim() !== '') yield parseLine(buffered, what);
}

function parseLine(line: string, what: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch (err) {
    throw new AgentError('ERR_UNAVAILABLE', `${what}: malformed watch event from API server`, { cause: err, retryable: true });
  }
}
