import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { contractMethod, isServiceName, type MethodDefinition } from '../../shared/contract/services';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';

// The discriminator keyword checks a tagged union (an experiment spec by its kind) against its one member;
// verbose errors carry the schema, so a wrong tag is answered with the tags allowed.
// The contract's schemas are the project's own and are checked against the JSON Schema meta-schema by a unit test
// (rpc-dispatcher.test.ts); checking them again here compiled the meta-schema on a user's first call (90 ms).
const ajv = new Ajv({ allErrors: false, strict: false, discriminator: true, verbose: true, validateSchema: false });
const compiled = new WeakMap<MethodDefinition, ValidateFunction[]>();

function validatorsOf(definition: MethodDefinition): ValidateFunction[] {
  let validators = compiled.get(definition);
  if (!validators) {
    validators = definition.args.map((argument) => ajv.compile(argument.schema));
    compiled.set(definition, validators);
  }
  return validators;
}

/** One ajv error in the words of the call: "runs.start: spec.concurrency must be number". */
function describe(call: string, argument: string, error: ErrorObject): string {
  const where = `${argument}${error.instancePath.replaceAll('/', '.')}`;
  if (error.keyword === 'additionalProperties') return `${call}: ${where} has no field "${String(error.params.additionalProperty)}"`;
  if (error.keyword === 'required') return `${call}: ${where} needs the field "${String(error.params.missingProperty)}"`;
  if (error.keyword === 'discriminator') {
    const { tag, tagValue } = error.params as { tag: string; tagValue: unknown };
    const members = (error.parentSchema?.oneOf ?? []) as { properties?: Record<string, { const?: unknown }> }[];
    const allowed = members.map((member) => JSON.stringify(member.properties?.[tag]?.const)).join(', ');
    return `${call}: ${where}.${tag} must be one of ${allowed}, got ${JSON.stringify(tagValue)}`;
  }
  return `${call}: ${where} ${error.message ?? 'is invalid'}`;
}

/**
 * The most useful of ajv's errors. For a union (a nullable field, a set of literals) that is the
 * failure inside the branch whose type matched; when no branch's type matched, the types allowed.
 */
function explain(call: string, argument: string, errors: ErrorObject[]): string {
  const union = errors.find((error) => error.keyword === 'anyOf');
  if (!union) return describe(call, argument, errors[0]!);
  const branches = errors.filter((error) => error !== union && error.instancePath.startsWith(union.instancePath));
  const inner = branches.find((error) => error.instancePath !== union.instancePath || !['type', 'const'].includes(error.keyword));
  if (inner) return describe(call, argument, inner);
  const allowed = branches.map((error) =>
    error.keyword === 'const' ? JSON.stringify(error.params.allowedValue) : String(error.params.type),
  );
  return `${call}: ${argument}${union.instancePath.replaceAll('/', '.')} must be ${[...new Set(allowed)].join(' or ')}`;
}

/**
 * Checks a call against the contract before any service sees it: the method must be declared,
 * the argument count fit, and every argument match its schema.
 */
export function checkCall(service: string, method: string, args: unknown[]): void {
  if (!isServiceName(service)) throw new AppError(ErrorCode.InvalidInput, `Unknown service "${service}"`);
  const definition = contractMethod(service, method);
  const call = `${service}.${method}`;
  if (!definition) throw new AppError(ErrorCode.InvalidInput, `Unknown method "${call}"`);
  const required = definition.args.filter((argument) => !argument.optional).length;
  if (args.length < required || args.length > definition.args.length)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${call} takes ${definition.args.map((argument) => (argument.optional ? `[${argument.name}]` : argument.name)).join(', ') || 'no arguments'}, got ${args.length} argument(s)`,
    );
  const validators = validatorsOf(definition);
  definition.args.forEach((argument, index) => {
    const value = args[index];
    if (value === undefined && argument.optional) return;
    const validate = validators[index]!;
    if (!validate(value)) throw new AppError(ErrorCode.InvalidInput, explain(call, argument.name, validate.errors!));
  });
}
