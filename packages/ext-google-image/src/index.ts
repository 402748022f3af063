export { googleImage, IMAGE_NAMESPACES } from './google-image.js';
