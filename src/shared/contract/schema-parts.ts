/**
 * The pieces every request schema of the contract is built from: bounded strings, nullable
 * fields, strict objects, and a union told apart by one field.
 */
import { Type, type Static, type TObject, type TSchema, type TUnion } from '@sinclair/typebox';
import { SLO_METRICS, type SloMetric } from './runs';

/** JSON carries an absent optional value as null, so optional fields accept both. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Maybe = <T extends TSchema>(schema: T, description?: string) =>
  Type.Optional(Nullable(description ? { ...schema, description } : schema));
export const Strict = { additionalProperties: false } as const;

/** Bounds that keep a hostile caller from handing the services unbounded input. */
export const Name = Type.String({ maxLength: 512 });
export const PathText = Type.String({ maxLength: 4096 });
export const LongText = Type.String({ maxLength: 8 * 1024 * 1024 });
export const Names = Type.Array(Name, { maxItems: 10_000 });

const sloLimit = Type.Optional(Type.Number());
/** A field per latency the metric table lets an SLO limit (`SLO_METRICS`). */
export const SloSpecSchema = Type.Object(
  Object.fromEntries(SLO_METRICS.map((metric) => [metric, sloLimit])) as Record<SloMetric, typeof sloLimit>,
  { ...Strict, description: 'Latency limits a request must meet to count toward goodput, in milliseconds.' },
);
export type SloSpec = Static<typeof SloSpecSchema>;

/**
 * Objects told apart by one literal field. The validator picks the member by that field and
 * checks it alone, so an error names the member's own field ("spec has no field vary"), not
 * every member that did not match.
 */
export function TaggedUnion<T extends TObject[]>(tag: string, members: [...T], description: string) {
  return Type.Unsafe<Static<TUnion<T>>>({
    type: 'object',
    required: [tag],
    discriminator: { propertyName: tag },
    oneOf: members,
    description,
  });
}
