/**
 * The shape of the files a run export holds. Raised whenever a field that import relies on
 * changes meaning or type, so an older reader refuses the files instead of misreading them.
 * Kept apart from the schema's checks (run-export-schema.ts, which load ajv), so that writing an
 * export does not load them.
 */
export const RUN_EXPORT_SCHEMA_VERSION = 1;
