import { type CaseMeta, readCase, serveSiteCase } from '@usp-ts/conformance';
import { type SitemapJSON, sitemapToJSON, type Warning } from '@usp-ts/core';
import { type SitemapTreeOptions, sitemapTreeForHomepage } from '../src/index.js';

/** usp's keyword arguments (case.json `options`) as our options. */
export function siteCaseOptions(meta: CaseMeta): SitemapTreeOptions {
  const o = meta.options ?? {};
  const reject = (re: string) => new RegExp(re);
  return {
    // Loopback server, and usp's 1 s retry sleep shortened: the attempt counts stay usp's.
    webClientOptions: { allowPrivateNetworks: true, baseDelayMs: 5, maxDelayMs: 10 },
    ...(o.use_robots !== undefined ? { useRobots: o.use_robots } : {}),
    ...(o.use_known_paths !== undefined ? { useKnownPaths: o.use_known_paths } : {}),
    ...(o.normalize_homepage_url !== undefined ? { normalizeHomepage: o.normalize_homepage_url } : {}),
    ...(o.extra_known_paths !== undefined ? { extraKnownPaths: o.extra_known_paths } : {}),
    ...(o.recurse_callback !== undefined
      ? { recurseCallback: (url: string) => !reject(o.recurse_callback!.reject_url_regex).test(url) }
      : {}),
    ...(o.recurse_list_callback !== undefined
      ? {
          recurseListCallback: (urls: string[]) =>
            urls.filter((u) => !reject(o.recurse_list_callback!.reject_url_regex).test(u)),
        }
      : {}),
  };
}

export interface SiteCaseRun {
  json: SitemapJSON;
  port: number;
  requests: string[];
  warnings: Warning[];
}

/** Serves a site case, walks it with the case's options (plus `extra`), and closes the server. */
export async function runSiteCase(
  name: string,
  extra: Partial<SitemapTreeOptions> = {},
): Promise<SiteCaseRun> {
  const c = readCase(name);
  const server = await serveSiteCase(name);
  const warnings: Warning[] = [];
  try {
    const tree = await sitemapTreeForHomepage(server.homepage, {
      ...siteCaseOptions(c.meta),
      onWarning: (w) => warnings.push(w),
      ...extra,
    });
    return { json: sitemapToJSON(tree), port: server.port, requests: [...server.requests], warnings };
  } finally {
    await server.close();
  }
}
