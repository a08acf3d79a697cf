/** What a call's argument text does not parse to. */
export const NOT_JSON = Symbol('arguments that are not JSON');

/**
 * A function call's arguments as the model streamed them, parsed once for both the timing (a call is
 * complete when its arguments parse) and the judge. An empty text is a call with no arguments, as
 * OpenAI's own clients read it.
 */
export function callArguments(text: string): unknown {
  try {
    return JSON.parse(text.trim() === '' ? '{}' : text);
  } catch {
    return NOT_JSON;
  }
}
