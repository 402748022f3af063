import {
  type PageDraft,
  type ParseContext,
  type SitemapImage,
  strippedText,
  unfetchableUrl,
  unfetchableUrlMessage,
  type XmlElement,
  type XmlExtension,
  type XmlExtensionHandler,
} from '@usp-ts/core/parse';

/** Google Image sitemap namespace, with the https and trailing-slash spellings seen in the wild. */
export const IMAGE_NAMESPACES: readonly string[] = [
  'http://www.google.com/schemas/sitemap-image/1.1',
  'http://www.google.com/schemas/sitemap-image/1.1/',
  'https://www.google.com/schemas/sitemap-image/1.1',
  'https://www.google.com/schemas/sitemap-image/1.1/',
];

/**
 * `<image:image>`: any number per page, appended to the page's `images` in document order.
 * Values are stripped (usp keeps them raw); empty values are `null`. An image whose `<image:loc>`
 * cannot be fetched (a host the WHATWG parser refuses, bytes invalid in the document's encoding)
 * is dropped with a warning, as pages are (usp keeps any string).
 */
export function googleImage(): XmlExtension {
  const namespaces = new Set(IMAGE_NAMESPACES);
  return {
    name: 'google-image',
    namespaces: IMAGE_NAMESPACES,
    create: (ctx) => new ImageHandler(ctx, namespaces),
  };
}

type MutableImage = { -readonly [K in keyof SitemapImage]: SitemapImage[K] };

class ImageHandler implements XmlExtensionHandler {
  private readonly ctx: ParseContext;
  private readonly namespaces: ReadonlySet<string>;
  private image: MutableImage | null = null;
  /** Depth of the open `<image:image>`, -1 when none. */
  private imageDepth = -1;
  /** The open image's `<image:loc>` was refused: the image is dropped. */
  private refused = false;

  constructor(ctx: ParseContext, namespaces: ReadonlySet<string>) {
    this.ctx = ctx;
    this.namespaces = namespaces;
  }

  startEntry(): void {
    this.image = null;
    this.imageDepth = -1;
  }

  open(el: XmlElement): void {
    if (el.local !== 'image' || this.image !== null || !this.namespaces.has(el.ns)) return;
    this.image = { loc: null, caption: null, geoLocation: null, title: null, license: null };
    this.imageDepth = el.depth;
    this.refused = false;
  }

  close(el: XmlElement, text: string, draft: PageDraft): void {
    if (!this.namespaces.has(el.ns)) return;
    const image = this.image;
    if (image === null) {
      if (el.local !== 'image') {
        this.ctx.warn('unknown-element', `<image:${el.local}> outside <image:image> ignored`);
      }
      return;
    }
    if (el.depth === this.imageDepth) {
      this.image = null;
      this.imageDepth = -1;
      if (this.refused) return;
      if (image.loc === null) {
        this.ctx.warn('missing-field', `<image:image> without <image:loc> in ${draft.url || 'a <url>'}`);
      }
      if (draft.images === null) draft.images = [image];
      else (draft.images as SitemapImage[]).push(image);
      return;
    }
    switch (el.local) {
      case 'loc': {
        const loc = strippedText(text);
        const problem = loc === null ? null : unfetchableUrl(loc);
        if (problem === null) {
          image.loc = loc;
        } else {
          this.refused = true;
          this.ctx.warn(problem, `Image URL ${unfetchableUrlMessage(problem)}, skipped: ${loc}`);
        }
        break;
      }
      case 'caption':
        image.caption = strippedText(text);
        break;
      case 'geo_location':
        image.geoLocation = strippedText(text);
        break;
      case 'title':
        image.title = strippedText(text);
        break;
      case 'license':
        image.license = strippedText(text);
        break;
    }
  }
}
