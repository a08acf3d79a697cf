import type { ServiceName } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';

type Kind = 'string' | 'string?' | 'string|null' | 'string[]' | 'string[]?' | 'object' | 'object?' | 'boolean?';

/** The argument kinds of every callable method; checked before a service sees anything. */
const RULES: { [S in ServiceName]: Record<string, Kind[]> } = {
  doctor: { report: [] },
  models: { scan: ['string[]?', 'object?'], quantize: ['string', 'string[]', 'string?'], cancel: ['string'] },
  servers: {
    list: [],
    profiles: [],
    defaultProfile: [],
    validateProfile: ['object', 'string|null'],
    saveProfile: ['object'],
    deleteProfile: ['string'],
    start: ['string', 'object', 'boolean?'],
    stop: ['string'],
    logs: ['string'],
  },
  workloads: { list: [], read: ['string'], validate: ['string'] },
  experiments: {
    start: ['object'],
    cancel: ['string'],
    list: [],
    get: ['string'],
    decide: ['string', 'string', 'string', 'string'],
    decisions: [],
  },
  runs: {
    start: ['object'],
    cancel: ['string'],
    list: [],
    get: ['string'],
    remove: ['string'],
    exportRun: ['string'],
    compare: ['string[]'],
  },
};

const MAX_STRING = 8 * 1024 * 1024;

function matches(kind: Kind, value: unknown): boolean {
  const isString = (item: unknown) => typeof item === 'string' && item.length <= MAX_STRING;
  switch (kind) {
    case 'string':
      return isString(value);
    // JSON carries an absent optional argument as null.
    case 'string?':
      return value === undefined || value === null || isString(value);
    case 'string|null':
      return value === null || isString(value);
    case 'object?':
      return value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value));
    case 'boolean?':
      return value === undefined || value === null || typeof value === 'boolean';
    case 'string[]':
      return Array.isArray(value) && value.length <= 10_000 && value.every(isString);
    case 'string[]?':
      return value === undefined || value === null || (Array.isArray(value) && value.length <= 10_000 && value.every(isString));
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
  }
}

export function checkArguments(service: ServiceName, method: string, args: unknown[]): void {
  const kinds = RULES[service][method];
  if (!kinds) throw new AppError(ErrorCode.InvalidInput, `Unknown method "${service}.${method}"`);
  const required = kinds.filter((kind) => !kind.endsWith('?')).length;
  if (args.length < required || args.length > kinds.length)
    throw new AppError(ErrorCode.InvalidInput, `${service}.${method} takes ${kinds.length} argument(s), got ${args.length}`);
  kinds.forEach((kind, index) => {
    if (!matches(kind, args[index]))
      throw new AppError(ErrorCode.InvalidInput, `${service}.${method}: argument ${index + 1} must be ${kind.replace('?', ' (optional)')}`);
  });
}
