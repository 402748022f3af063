export { googleVideo, VIDEO_NAMESPACES } from './google-video.js';
export type {
  Video,
  VideoPlatformName,
  VideoPlatforms,
  VideoPrice,
  VideoRelationship,
  VideoRestriction,
  VideoUploader,
} from './video.js';
