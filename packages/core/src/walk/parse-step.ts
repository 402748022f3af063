import { errorText } from '../contract/errors.js';
import type { ChildRef, Page } from '../contract/model.js';
import type { EncodedPages } from '../contract/page-store.js';
import { type ParsedDocument, sitemapFromDocument } from '../contract/parsed-document.js';
import { AbstractIndexSitemap, type PagesSitemapType } from '../contract/sitemap.js';
import type { Warning } from '../contract/warning.js';
import type { WebResponse } from '../contract/web-client.js';
import type { ParseDocumentOptions } from '../engine/document-options.js';
import type { ResponseMeter } from './document-response.js';
import { type FetchResult, type FetchTask, hook } from './task.js';
import type { WalkState } from './walk-state.js';

/**
 * The walk's parse step: parses a fetched body into its node, its pages going to the page store
 * and the walk's sink within the walk's page budget (`maxPages`: the page past it stops the walk).
 * A parser that throws after pages flowed keeps them, as a truncated document. The body is
 * measured into `facts` as it is read; the caller's `beforeParse` is awaited first.
 */
export async function parseStep(
  walk: WalkState,
  task: FetchTask,
  response: Extract<WebResponse, { kind: 'ok' }>,
  contentType: string | null,
  facts: ResponseMeter,
): Promise<[FetchResult, ChildRef[]]> {
  const [result, children] = await parseBody(walk, task, response, contentType, facts);
  // A body never read (a parser that failed first) ends here.
  facts.end();
  result.response = facts;
  return [result, children];
}

async function parseBody(
  walk: WalkState,
  task: FetchTask,
  response: Extract<WebResponse, { kind: 'ok' }>,
  contentType: string | null,
  facts: ResponseMeter,
): Promise<[FetchResult, ChildRef[]]> {
  const { hooks, documentLimits, gunzip } = walk.config;
  const { hashBody } = hooks;
  const finalUrl = response.url;
  const beforeParse = hooks.beforeParse;
  if (beforeParse !== undefined) {
    try {
      await beforeParse({
        requestedUrl: task.url,
        finalUrl,
        parentUrl: task.parentUrl ?? null,
        level: task.level,
        response: facts,
      });
    } catch (error) {
      response.cancel();
      const reason = `Unable to fetch sitemap from ${task.url}: ${errorText(error)}`;
      return [walk.result(task, walk.invalidNode(task.url, reason, task.lastModified, 'fetch'), null), []];
    }
  }
  const writer = walk.config.pageStore.open(finalUrl);
  let pagesType: PagesSitemapType | null = null;
  let accepted = 0;
  let cut = false;
  const info = { url: finalUrl, type: 'PagesXMLSitemap' as PagesSitemapType };
  const onPages = async (batch: Page[], type?: PagesSitemapType, encoded?: EncodedPages): Promise<void> => {
    if (type !== undefined && pagesType === null) {
      pagesType = type;
      info.type = type;
    }
    let pages = batch;
    const room = walk.config.maxPages - walk.pages;
    if (pages.length > room) {
      pages = pages.slice(0, Math.max(room, 0));
      // Encoded as the whole batch: the store encodes the pages kept itself.
      encoded = undefined;
      if (!cut) {
        cut = true;
        // Stops this body (and every other): the document ends as truncated with what it has.
        walk.stop('maxPages');
      }
    }
    if (pages.length === 0) return;
    if (writer.appendPages !== undefined) writer.appendPages(pages, encoded);
    else for (const p of pages) writer.append(p);
    accepted += pages.length;
    walk.pages += pages.length;
    if (walk.sink !== null) await walk.sink(pages, info);
    walk.progress();
  };
  const parseOptions: Omit<ParseDocumentOptions, 'registry'> = {
    url: finalUrl,
    body: facts.read(response.body, hashBody === undefined ? null : (hook(hashBody) ?? null)),
    headers: response.headers,
    onPages,
    // Abort and deadline end the parse at once, keeping what was read (the body is cut too).
    signal: walk.signal,
    ...(hooks.onWarning !== undefined ? { onWarning: hooks.onWarning } : {}),
    ...(documentLimits !== undefined ? { limits: documentLimits } : {}),
    ...(gunzip !== undefined ? { gunzip } : {}),
  };
  const parse = walk.config.parse;
  let parsed: ParsedDocument;
  try {
    parsed = await parse({ ...parseOptions, registry: await walk.registry() });
  } catch (error) {
    response.cancel();
    const stored = writer.close();
    if (accepted > 0 && pagesType !== null) {
      // The parser gave up after pages flowed (aborted mid-body): keep them.
      const warnings: Warning[] = [];
      walk.warn(warnings, 'truncated', `Reading ${finalUrl} stopped: ${errorText(error)}`, finalUrl);
      const doc: ParsedDocument = {
        url: finalUrl,
        type: pagesType,
        children: [],
        warnings,
        bytes: 0,
        truncated: true,
      };
      const node = sitemapFromDocument(doc, { stored, lastModified: task.lastModified });
      const result = walk.result(task, node, contentType);
      result.stored = stored;
      return [result, []];
    }
    stored.release?.();
    const reason = `Unable to parse sitemap from ${finalUrl}: ${errorText(error)}`;
    const result = walk.result(
      task,
      walk.invalidNode(finalUrl, reason, task.lastModified, 'fetch'),
      contentType,
    );
    result.stored = stored;
    return [result, []];
  } finally {
    // A parser that stopped early (a limit, an invalid root) leaves the rest unread.
    response.cancel();
  }
  walk.bytes += parsed.bytes;
  if (cut) {
    walk.warn(
      parsed.warnings,
      'limit',
      `Pages after the walk's limit of ${walk.config.maxPages} were dropped`,
      parsed.url,
    );
  }
  const stored = writer.close();
  const node = sitemapFromDocument(parsed, { stored, lastModified: task.lastModified });
  const result = walk.result(task, node, contentType);
  result.stored = stored;
  return [result, node instanceof AbstractIndexSitemap ? parsed.children : []];
}
