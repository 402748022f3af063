import { createRegistry, type Plugin, type Registry, type XmlExtension } from '@usp-ts/core/parse';
import { googleImage } from '@usp-ts/ext-google-image';
import { googleNews } from '@usp-ts/ext-google-news';
import { googleVideo } from '@usp-ts/ext-google-video';
import { atom } from '@usp-ts/format-atom';
import { robotsTxt } from '@usp-ts/format-robots';
import { rss } from '@usp-ts/format-rss';
import { plainText } from '@usp-ts/format-text';
import { xmlSitemap } from '@usp-ts/format-xml-sitemap';

/**
 * Every format this package ships, in the order detection asks them: robots.txt before plain
 * text (both claim non-XML documents; robots.txt only by its URL), then the XML formats.
 * A fresh list on every call: plugins are plain data, but callers may edit the array.
 * `extensions` are more namespace extensions for the XML sitemap format, after News, Image and Video.
 */
export function defaultPlugins(options: { extensions?: readonly XmlExtension[] } = {}): Plugin[] {
  return [
    robotsTxt(),
    plainText(),
    xmlSitemap({ extensions: [googleNews(), googleImage(), googleVideo(), ...(options.extensions ?? [])] }),
    rss(),
    atom(),
  ];
}

/** A registry of {@link defaultPlugins}. Build your own with `createRegistry` for fewer formats. */
export function createDefaultRegistry(): Registry {
  return createRegistry(defaultPlugins());
}
