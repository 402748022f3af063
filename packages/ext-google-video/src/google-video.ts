import {
  isHttpUrl,
  type PageDraft,
  type ParseContext,
  parseIsoDate,
  strippedText,
  type XmlElement,
  type XmlExtension,
  type XmlExtensionHandler,
} from '@usp-ts/core/parse';
import { decimal, relationship, tokens, wholeNumber, yesNo } from './values.js';
import type { Video, VideoPlatformName, VideoPrice } from './video.js';

/** Google Video sitemap namespace, with the https and trailing-slash spellings seen in the wild. */
export const VIDEO_NAMESPACES: readonly string[] = [
  'http://www.google.com/schemas/sitemap-video/1.1',
  'http://www.google.com/schemas/sitemap-video/1.1/',
  'https://www.google.com/schemas/sitemap-video/1.1',
  'https://www.google.com/schemas/sitemap-video/1.1/',
];

/** Google's upper bound for `<video:duration>` (8 hours); longer values are kept with a warning. */
const MAX_DURATION_SECONDS = 28_800;
/** Google reads at most this many `<video:tag>` per video; more are kept with a warning. */
const MAX_TAGS = 32;
const COUNTRY = /^[A-Za-z]{2}$/;
const CURRENCY = /^[A-Za-z]{3}$/;

/**
 * `<video:video>`: any number per page, in `page.extensions.videos`. Written against
 * `@usp-ts/core`'s public exports only, as any third-party extension would be.
 */
export function googleVideo(): XmlExtension {
  const namespaces = new Set(VIDEO_NAMESPACES);
  return {
    name: 'google-video',
    namespaces: VIDEO_NAMESPACES,
    create: (ctx) => new VideoHandler(ctx, namespaces),
  };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type VideoDraft = Mutable<Video> & { tags: string[]; prices: VideoPrice[] };

function newVideo(): VideoDraft {
  return {
    thumbnailLoc: null,
    title: null,
    description: null,
    contentLoc: null,
    playerLoc: null,
    playerAllowEmbed: null,
    playerAutoplay: null,
    durationSeconds: null,
    expirationDate: null,
    rating: null,
    viewCount: null,
    publicationDate: null,
    familyFriendly: null,
    restriction: null,
    platform: null,
    requiresSubscription: null,
    uploader: null,
    live: null,
    tags: [],
    prices: [],
  };
}

class VideoHandler implements XmlExtensionHandler {
  private readonly ctx: ParseContext;
  private readonly namespaces: ReadonlySet<string>;
  private videos: Video[] | null = null;
  private video: VideoDraft | null = null;
  private videoDepth = -1;
  /** URL of the current page, for warnings. */
  private pageUrl = '';

  constructor(ctx: ParseContext, namespaces: ReadonlySet<string>) {
    this.ctx = ctx;
    this.namespaces = namespaces;
  }

  startEntry(): void {
    this.videos = null;
    this.video = null;
    this.videoDepth = -1;
  }

  open(el: XmlElement): void {
    if (el.local !== 'video' || this.video !== null || !this.namespaces.has(el.ns)) return;
    this.video = newVideo();
    this.videoDepth = el.depth;
  }

  close(el: XmlElement, raw: string, draft: PageDraft): void {
    if (!this.namespaces.has(el.ns)) return;
    this.pageUrl = draft.url;
    const video = this.video;
    if (video === null) {
      if (el.local !== 'video')
        this.warn('unknown-element', `<video:${el.local}> outside <video:video> ignored`);
      return;
    }
    if (el.depth === this.videoDepth) {
      this.finish(video);
      return;
    }
    // Fields are direct children of <video:video>; deeper elements (none are defined) are ignored.
    if (el.depth !== this.videoDepth + 1) return;
    this.readField(video, el, raw);
  }

  endEntry(draft: PageDraft): void {
    const videos = this.videos;
    this.videos = null;
    this.video = null;
    this.videoDepth = -1;
    if (videos === null) return;
    // Spread: other extensions may have written their own keys already.
    draft.extensions = { ...draft.extensions, videos };
  }

  private finish(video: VideoDraft): void {
    this.video = null;
    this.videoDepth = -1;
    const missing: string[] = [];
    if (video.thumbnailLoc === null) missing.push('thumbnail_loc');
    if (video.title === null) missing.push('title');
    if (video.description === null) missing.push('description');
    if (video.contentLoc === null && video.playerLoc === null) missing.push('content_loc or player_loc');
    if (missing.length > 0) this.warn('missing-field', `<video:video> without ${missing.join(', ')}`);
    if (video.tags.length > MAX_TAGS)
      this.warn('over-spec', `<video:video> has ${video.tags.length} tags (Google reads ${MAX_TAGS})`);
    if (this.videos === null) this.videos = [video];
    else this.videos.push(video);
  }

  private readField(video: VideoDraft, el: XmlElement, raw: string): void {
    switch (el.local) {
      case 'thumbnail_loc':
        video.thumbnailLoc = this.url(raw, el.local);
        break;
      case 'title':
        video.title = strippedText(raw);
        break;
      case 'description':
        video.description = strippedText(raw);
        break;
      case 'content_loc':
        video.contentLoc = this.url(raw, el.local);
        break;
      case 'player_loc': {
        video.playerLoc = this.url(raw, el.local);
        const embed = el.attrs.allow_embed;
        if (embed !== undefined) video.playerAllowEmbed = this.flag(embed, 'player_loc allow_embed');
        const autoplay = el.attrs.autoplay;
        if (autoplay !== undefined) video.playerAutoplay = strippedText(autoplay);
        break;
      }
      case 'duration': {
        const n = wholeNumber(raw);
        if (n === undefined || n < 1) {
          this.invalid(el.local, raw);
          video.durationSeconds = null;
        } else {
          if (n > MAX_DURATION_SECONDS)
            this.warn('over-spec', `<video:duration> ${n} is over ${MAX_DURATION_SECONDS} s`);
          video.durationSeconds = n;
        }
        break;
      }
      case 'expiration_date':
        video.expirationDate = this.date(raw, el.local);
        break;
      case 'publication_date':
        video.publicationDate = this.date(raw, el.local);
        break;
      case 'rating': {
        const r = decimal(raw);
        const valid = r !== undefined && r <= 5;
        if (!valid) this.invalid(el.local, raw);
        video.rating = valid ? r : null;
        break;
      }
      case 'view_count': {
        const n = wholeNumber(raw);
        if (n === undefined) this.invalid(el.local, raw);
        video.viewCount = n ?? null;
        break;
      }
      case 'family_friendly':
        video.familyFriendly = this.flag(raw, el.local);
        break;
      case 'requires_subscription':
        video.requiresSubscription = this.flag(raw, el.local);
        break;
      case 'live':
        video.live = this.flag(raw, el.local);
        break;
      case 'restriction':
        video.restriction = this.restriction(el, raw);
        break;
      case 'platform':
        video.platform = this.platform(el, raw);
        break;
      case 'uploader': {
        const name = strippedText(raw);
        if (name === null) {
          this.invalid(el.local, raw);
          video.uploader = null;
        } else {
          const info = el.attrs.info === undefined ? null : this.url(el.attrs.info, 'uploader info');
          video.uploader = { name, info };
        }
        break;
      }
      case 'tag': {
        const tag = strippedText(raw);
        if (tag !== null) video.tags.push(tag);
        break;
      }
      case 'price': {
        const price = this.price(el, raw);
        if (price !== null) video.prices.push(price);
        break;
      }
    }
  }

  private url(raw: string, field: string): string | null {
    const s = strippedText(raw);
    if (s === null) return null;
    if (isHttpUrl(s)) return s;
    this.invalid(field, raw);
    return null;
  }

  private date(raw: string, field: string) {
    const s = strippedText(raw);
    if (s === null) return null;
    const d = parseIsoDate(s);
    if (d === null) this.ctx.warn('invalid-date', `Invalid <video:${field}> ignored: ${s}`);
    return d;
  }

  private flag(raw: string, field: string): boolean | null {
    const b = yesNo(raw);
    if (b === undefined) {
      this.invalid(field, raw);
      return null;
    }
    return b;
  }

  private restriction(el: XmlElement, raw: string): Video['restriction'] {
    const rel = relationship(el.attrs.relationship);
    if (rel === undefined) {
      this.invalid('restriction relationship', el.attrs.relationship ?? '');
      return null;
    }
    const countries: string[] = [];
    for (const t of tokens(raw)) {
      if (COUNTRY.test(t)) countries.push(t.toUpperCase());
      else this.invalid('restriction country', t);
    }
    return { relationship: rel, countries };
  }

  private platform(el: XmlElement, raw: string): Video['platform'] {
    const rel = relationship(el.attrs.relationship);
    if (rel === undefined) {
      this.invalid('platform relationship', el.attrs.relationship ?? '');
      return null;
    }
    const platforms: VideoPlatformName[] = [];
    for (const t of tokens(raw)) {
      const p = t.toLowerCase();
      if (p === 'web' || p === 'mobile' || p === 'tv') platforms.push(p);
      else this.invalid('platform', t);
    }
    return { relationship: rel, platforms };
  }

  private price(el: XmlElement, raw: string): VideoPrice | null {
    const amount = decimal(raw);
    const currency = el.attrs.currency?.trim();
    if (amount === undefined || currency === undefined || !CURRENCY.test(currency)) {
      this.invalid('price', `${raw.trim()} ${currency ?? '(no currency)'}`);
      return null;
    }
    const type = el.attrs.type?.trim().toLowerCase();
    const resolution = el.attrs.resolution?.trim().toLowerCase();
    return {
      amount,
      currency: currency.toUpperCase(),
      type: type === 'rent' || type === 'own' ? type : null,
      resolution: resolution === 'hd' || resolution === 'sd' ? resolution : null,
    };
  }

  private invalid(field: string, raw: string): void {
    this.warn('invalid-value', `Invalid <video:${field}> ${JSON.stringify(raw.trim())} ignored`);
  }

  private warn(code: string, message: string): void {
    this.ctx.warn(code, this.pageUrl ? `${message} (page ${this.pageUrl})` : message);
  }
}
