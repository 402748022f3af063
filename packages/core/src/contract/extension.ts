import { PluginConflictError } from './errors.js';
import type { PageDraft } from './model.js';
import type { ParseContext, XmlElement, XmlExtension, XmlExtensionHandler } from './plugin.js';

/**
 * Routes the element events of one entry to the namespace extensions a format was given.
 * An element in a claimed namespace, and everything nested in it, goes to that extension.
 */
export interface ExtensionRouter {
  startEntry(draft: PageDraft): void;
  /** `true` when an extension took the element (the format should then ignore it). */
  open(el: XmlElement, draft: PageDraft): boolean;
  close(el: XmlElement, text: string, draft: PageDraft): boolean;
  endEntry(draft: PageDraft): void;
  /** Whether some extension claims this namespace URI. */
  claims(ns: string): boolean;
}

/** Throws `PluginConflictError` when two extensions claim one namespace: a caller mistake. */
export function checkExtensions(extensions: readonly XmlExtension[]): void {
  const seen = new Map<string, string>();
  for (const ext of extensions) {
    for (const ns of ext.namespaces) {
      const other = seen.get(ns);
      if (other !== undefined) {
        throw new PluginConflictError(`Extensions ${other} and ${ext.name} both claim namespace ${ns}`);
      }
      seen.set(ns, ext.name);
    }
  }
}

export function createExtensionRouter(
  extensions: readonly XmlExtension[],
  ctx: ParseContext,
): ExtensionRouter {
  const byNs = new Map<string, XmlExtensionHandler>();
  const handlers: XmlExtensionHandler[] = [];
  for (const ext of extensions) {
    const handler = ext.create(ctx);
    handlers.push(handler);
    for (const ns of ext.namespaces) byNs.set(ns, handler);
  }
  // The extension that owns the element subtree we are in, and the depth of its top element.
  let active: XmlExtensionHandler | null = null;
  let activeDepth = -1;

  return {
    claims: (ns) => byNs.has(ns),
    startEntry(draft) {
      active = null;
      activeDepth = -1;
      for (const h of handlers) h.startEntry?.(draft);
    },
    open(el, draft) {
      if (active === null) {
        const h = byNs.get(el.ns);
        if (h === undefined) return false;
        active = h;
        activeDepth = el.depth;
      }
      active.open(el, draft);
      return true;
    },
    close(el, text, draft) {
      if (active === null) return false;
      const h = active;
      if (el.depth === activeDepth) {
        active = null;
        activeDepth = -1;
      }
      h.close(el, text, draft);
      return true;
    },
    endEntry(draft) {
      active = null;
      activeDepth = -1;
      for (const h of handlers) h.endEntry?.(draft);
    },
  };
}
