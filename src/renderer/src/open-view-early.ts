import { parseRoute } from './state/route';
import { VIEWS } from './view-code';

// Imported first by main.tsx: the view the address names starts loading before the renderer and the
// shell are evaluated, rather than once the shell has rendered and asked for it.
const named = parseRoute(window.location.hash);
if (named) void VIEWS[named.view].preload();
