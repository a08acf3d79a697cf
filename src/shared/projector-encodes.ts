import type { PlannedCandidate } from './contract/models';

/** What a planned projector encodes, in words: "images", "images and audio", or that it declares nothing. */
export const projectorEncodes = (projector: NonNullable<PlannedCandidate['projector']>): string =>
  [projector.vision ? 'images' : null, projector.audio ? 'audio' : null].filter(Boolean).join(' and ') || 'nothing it declares';
