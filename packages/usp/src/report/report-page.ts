import { escapeHtml, scriptJson } from './html-escape.js';

/** Styles: system fonts, light and dark, and a print layout with every section open. */
const CSS = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#5b6470;--bg:#fff;--line:#d8dde3;--bar:#2f6fb3;--bad:#b42318;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ee;--muted:#9aa4b1;--bg:#12161b;--line:#2c333c;--bar:#6aa7e8;--bad:#ff7b72;--ok:#56d364}}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.muted,figcaption span{color:var(--muted)}a{color:var(--bar)}
.totals{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}.total{border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:120px}
.total b{display:block;font-size:20px}.bad{color:var(--bad)}.ok{color:var(--ok)}
table{border-collapse:collapse;width:100%;margin:6px 0}th,td{text-align:left;padding:3px 8px;border-bottom:1px solid var(--line);vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.url{word-break:break-all}
figure.chart{margin:12px 0}figure.chart svg{width:100%;height:auto;max-height:360px}
rect.bar{fill:var(--bar)}svg text{fill:var(--muted);font-size:10px}
details.node{margin-left:18px}details.node>summary{cursor:pointer;padding:2px 0}details.node.leaf>summary{list-style:none}
details.node>summary .type{font-size:11px;border:1px solid var(--line);border-radius:4px;padding:0 4px;margin-right:6px}
.facts{color:var(--muted);font-size:12px;margin-left:6px}
button,input,select{font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:3px 8px}
button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:2px solid var(--bar);outline-offset:2px}
.controls{display:flex;gap:8px;flex-wrap:wrap;align-items:center;margin:6px 0}
@media print{.controls,.no-print{display:none}body{max-width:none}h2{break-after:avoid}figure,tr{break-inside:avoid}}
`;

/**
 * The report's only script: the URL list's search and pages, and the tree's expand/collapse.
 * Everything else is plain HTML, so the report reads with scripts off and prints whole.
 */
const SCRIPT = `
(function(){
function all(open){var d=document.querySelectorAll('details.node');for(var i=0;i<d.length;i++)d[i].open=open;}
var ex=document.getElementById('tree-expand'),co=document.getElementById('tree-collapse');
if(ex)ex.addEventListener('click',function(){all(true);});if(co)co.addEventListener('click',function(){all(false);});
window.addEventListener('beforeprint',function(){all(true);});
var el=document.getElementById('usp-urls');if(!el)return;
var data=JSON.parse(el.textContent);
var q=document.getElementById('url-search'),sel=document.getElementById('url-sitemap'),body=document.getElementById('url-rows'),
info=document.getElementById('url-info'),prev=document.getElementById('url-prev'),next=document.getElementById('url-next');
var PAGE=100,page=0,rows=[];
function filter(){var s=q.value.trim().toLowerCase(),m=sel.value;rows=[];
for(var i=0;i<data.length;i++){var g=data[i];if(m!==''&&g.sitemap!==m)continue;
for(var j=0;j<g.urls.length;j++){var u=g.urls[j];if(s===''||u.toLowerCase().indexOf(s)!==-1)rows.push([u,g.sitemap]);}}
page=0;show();}
function show(){while(body.firstChild)body.removeChild(body.firstChild);
var start=page*PAGE,end=Math.min(rows.length,start+PAGE);
for(var i=start;i<end;i++){var tr=document.createElement('tr'),a=document.createElement('td'),b=document.createElement('td');
a.className='url';b.className='url muted';a.textContent=rows[i][0];b.textContent=rows[i][1];tr.appendChild(a);tr.appendChild(b);body.appendChild(tr);}
info.textContent=rows.length===0?'no URL matches':(start+1)+'\\u2013'+end+' of '+rows.length.toLocaleString('en-US')+' listed URLs';
prev.disabled=page===0;next.disabled=end>=rows.length;}
q.addEventListener('input',filter);sel.addEventListener('change',filter);
prev.addEventListener('click',function(){if(page>0){page--;show();}});
next.addEventListener('click',function(){if((page+1)*PAGE<rows.length){page++;show();}});
filter();
})();
`;

export interface UrlGroup {
  sitemap: string;
  urls: readonly string[];
}

/** The searchable URL list: its controls, its table and the data the script pages through. */
export function urlListSection(groups: readonly UrlGroup[], caption: string): string {
  const options = groups
    .map(
      (g) => `<option value="${escapeHtml(g.sitemap)}">${escapeHtml(g.sitemap)} (${g.urls.length})</option>`,
    )
    .join('');
  return `<section id="urls"><h2>URLs</h2><p class="muted">${escapeHtml(caption)}</p>
<div class="controls no-print"><label>Search <input id="url-search" type="search" placeholder="part of a URL"></label>
<label>Sitemap <select id="url-sitemap"><option value="">all sitemaps</option>${options}</select></label>
<button id="url-prev" type="button">Previous</button><button id="url-next" type="button">Next</button> <span id="url-info" aria-live="polite"></span></div>
<table><thead><tr><th>URL</th><th>sitemap</th></tr></thead><tbody id="url-rows"></tbody></table>
<script type="application/json" id="usp-urls">${scriptJson(groups)}</script></section>`;
}

/** A whole report: one HTML file with its styles and script inline, no request when opened. */
export function reportPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title><style>${CSS}</style></head>
<body>${body}<script>${SCRIPT}</script></body></html>
`;
}

export function totals(
  items: readonly { label: string; value: number | string; id: string; tone?: 'bad' | 'ok' }[],
): string {
  return `<div class="totals">${items
    .map(
      (t) =>
        `<div class="total" data-total="${t.id}"><b class="${t.tone ?? ''}">${typeof t.value === 'number' ? t.value.toLocaleString('en-US') : escapeHtml(t.value)}</b>${escapeHtml(t.label)}</div>`,
    )
    .join('')}</div>`;
}
