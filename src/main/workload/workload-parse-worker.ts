/**
 * A workload parser thread (bounded-parse.ts starts it under a heap limit and a deadline): it
 * parses and validates workload text from anywhere, so a text that costs minutes or gigabytes
 * costs this thread, which is then terminated, and never the service's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { AppError } from '../core/errors';
import { decodeWorkloadBytes, parseWorkloadText } from './parse-workload';
import type { ParseReply, ParseRequest } from './bounded-parse';
import { loadPrebuiltWorkloadValidator, useWorkloadValidator } from './workload-validator';

const port = parentPort!;
// A broken text can raise hundreds of thousands of syntax errors, and each would capture a stack
// no one reads (only the messages go back): without them a 3 MB text of errors parses in half the time.
Error.stackTraceLimit = 0;

function answer(request: ParseRequest): ParseReply {
  try {
    const text =
      request.text ?? (request.fromFile ? decodeWorkloadBytes(request.bytes, request.file) : new TextDecoder().decode(request.bytes));
    return { id: request.id, ok: true, def: parseWorkloadText(text, request.file) };
  } catch (error) {
    if (error instanceof AppError) return { id: request.id, ok: false, error: { app: true, ...error.toShape() } };
    const { name, message } = error as Error;
    return { id: request.id, ok: false, error: { app: false, name, message } };
  }
}

// The build's validator where it is today's; otherwise the schema is compiled before the first text
// arrives (the warm-up below), so no deadline pays for it.
const prebuilt = await loadPrebuiltWorkloadValidator(import.meta.url);
if (prebuilt) useWorkloadValidator(prebuilt);
// Texts sent meanwhile wait in the port's queue until this listener starts it.
port.on('message', (request: ParseRequest) => port.postMessage(answer(request)));
parseWorkloadText('name: warm\ngroups: [{ name: g, items: [{ id: a, prompt: hi }] }]\n', 'warm-up.yaml');
port.postMessage('ready');
