/** What `serve` answers a request without its token, and what the page shows when it was opened without one. */
export const NO_TOKEN_MESSAGE = 'Open the URL printed by inferlab serve: it carries the access token.';
