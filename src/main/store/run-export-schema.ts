import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { projectRoot } from '../core/paths';

export type ExportDocument = 'manifest' | 'summary' | 'request' | 'telemetry';

const SCHEMA_ID = 'https://inferlab.local/run-export.schema.json';

export function runExportSchemaFile(): string {
  return path.join(projectRoot(), 'resources', 'run-export.schema.json');
}

let validators: Record<ExportDocument, ValidateFunction> | null = null;
function validatorFor(document: ExportDocument): ValidateFunction {
  if (!validators) {
    const ajv = new Ajv({ allErrors: false, strict: false });
    ajv.addSchema(JSON.parse(fs.readFileSync(runExportSchemaFile(), 'utf8')) as object);
    const compile = (name: ExportDocument) => ajv.compile({ $ref: `${SCHEMA_ID}#/definitions/${name}` });
    validators = {
      manifest: compile('manifest'),
      summary: compile('summary'),
      request: compile('request'),
      telemetry: compile('telemetry'),
    };
  }
  return validators[document];
}

export interface ExportProblem {
  /** Dotted path of the offending field ("model.sha256", "points[3]"); empty for the document itself. */
  field: string;
  message: string;
}

function fieldOf(error: ErrorObject): string {
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') parts.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') parts.push(String(error.params.additionalProperty));
  return parts.reduce<string>((text, part) => (/^\d+$/.test(part) ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
}

function explain(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is missing';
  if (error.keyword === 'additionalProperties') return 'is not a field of this version';
  if (error.keyword === 'type') return `must be ${String(error.params.type).split(',').join(' or ')}`;
  if (error.keyword === 'enum')
    return `must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
  return error.message ?? 'is invalid';
}

/** The first problem of a parsed export file against the shipped schema, or null when it conforms. */
export function exportDocumentProblem(document: ExportDocument, value: unknown): ExportProblem | null {
  const validate = validatorFor(document);
  if (validate(value)) return null;
  const errors = validate.errors ?? [];
  const first = errors[0];
  if (!first) return { field: '', message: 'is invalid' };
  const union = errors.find((error) => error.keyword === 'anyOf');
  if (!union) return { field: fieldOf(first), message: explain(first) };
  // A nullable field: the failure inside the branch whose type matched, else the types allowed.
  const inner = errors.find((error) => error !== union && error.keyword !== 'type');
  if (inner) return { field: fieldOf(inner), message: explain(inner) };
  const allowed = [...new Set(errors.filter((error) => error.keyword === 'type').map((error) => String(error.params.type)))];
  return { field: fieldOf(union), message: `must be ${allowed.join(' or ')}` };
}
