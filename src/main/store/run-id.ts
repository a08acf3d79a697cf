/**
 * The one form of run id Infer Lab writes (`crypto.randomUUID()`): 36 characters, lower-case.
 * Lists show the first 8 and people type prefixes, so an id of another form (a short one, say)
 * could stand in for another run's prefix; imports take only this form.
 */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isRunId = (id: string): boolean => RUN_ID.test(id);

/** How many characters of an id the lists show. */
export const SHORT_RUN_ID_LENGTH = 8;
