// Turns the measured runs into results.md and the target checks of issues 3 and 7.

/** The least of a field over an implementation's successful runs. */
function fastest(result, field) {
  return Math.min(...(result?.runs ?? []).filter((r) => r.ok).map((r) => r[field]));
}

function medianOf(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Median over rounds of `floor time ÷ our time`, each round's two runs taken back to back. This
 * machine drifts between a fast and a slow state (about 1.5× apart, lasting seconds, for every
 * program alike); a ratio of two medians can pair a fast floor with a slow us or the reverse,
 * a ratio within one round rarely does.
 */
export function pairedRatio(floor, result, field) {
  const a = floor?.runs ?? [];
  const b = result?.runs ?? [];
  const ratios = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i].ok && b[i].ok) ratios.push(a[i][field] / b[i][field]);
  }
  return ratios.length === 0 ? null : medianOf(ratios);
}

/** Figures quoted from issue 7 (Python usp cannot be installed here: no PyPI). Not measured by us. */
export const QUOTED = {
  source:
    'issue 7, measured on this 2-core machine over loopback; Python usp 1.8.1 is not installable here (no PyPI), so its figures are quoted, not measured',
  bigSite: [
    { impl: 'usp 1.8.1 (Python)', wallS: 30.7, rssMiB: 143 },
    { impl: 'crawlee parseSitemap 3.18', wallS: 15.0, rssMiB: 154 },
    { impl: 'sitemapper 4.1', wallS: 22.3, rssMiB: 718 },
    { impl: 'sax tokenising (strict, no handlers)', wallS: 8.0, rssMiB: null },
    { impl: 'gunzip alone', wallS: 0.7, rssMiB: null },
  ],
  image10k: [
    { impl: 'usp 1.8.1 (Python)', wallS: 0.57 },
    { impl: 'sitemapper 4.1', wallS: 0.72 },
    { impl: 'crawlee parseSitemap 3.18', wallS: 1.05 },
  ],
  uspBigSiteWallS: 30.7,
  uspBigSiteRssMiB: 143,
  crawleeString50kS: 417,
};

const MIB = 1024;
const s2 = (ms) =>
  ms == null ? '–' : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`;
const mib = (kib) => (kib == null ? '–' : `${(kib / MIB).toFixed(0)} MiB`);
const x = (v, d = 2) => (v == null ? '–' : `${v.toFixed(d)}×`);
const mbs = (v) => (v == null ? '–' : v >= 10 ? v.toFixed(0) : v.toFixed(1));
const num = (v) =>
  v == null
    ? '–'
    : v >= 1e6
      ? `${+(v / 1e6).toFixed(2)}M`
      : v >= 1e3
        ? `${(v / 1e3).toFixed(0)}k`
        : v.toFixed(0);

function ours(c) {
  return c?.results?.ours?.median ? c.results.ours : null;
}

export function computeTargets(results) {
  const byId = Object.fromEntries(results.cases.map((c) => [c.id, c]));
  const t = [];
  const add = (name, pass, detail) =>
    t.push({ name, status: pass === null ? 'N/A' : pass ? 'PASS' : 'FAIL', detail });
  // A fast run that lost pages proves nothing: every target on that input fails.
  for (const c of results.cases) {
    const o = ours(c);
    if (o?.countMismatch) add(`${c.id}: every page delivered`, false, `${o.urls} of ${c.urls} URLs`);
  }

  for (const [id, what] of [
    ['urlset-doc', 'urlset'],
    ['urlset-gz-doc', 'gzipped urlset'],
    ['image-doc', 'image sitemap'],
  ]) {
    const c = byId[id];
    const o = ours(c);
    const floor = c?.results?.sax?.median;
    if (!o || !floor) {
      add(
        `one document (${what}): ≥ 0.7 of sax's throughput`,
        null,
        'not measured (an implementation failed)',
      );
      continue;
    }
    const paired = pairedRatio(c.results.sax, o, 'wallMs');
    add(
      `one document (${what}): ≥ 0.7 of sax's throughput`,
      paired >= 0.7,
      `${paired.toFixed(2)} of sax's throughput, median of ${o.runs.length} back-to-back rounds (by CPU time: ${pairedRatio(c.results.sax, o, 'cpuMs').toFixed(2)}); ` +
        `medians ${mbs(o.mbPerS)} vs ${mbs(c.results.sax.mbPerS)} MB/s = ${o.throughputVsFloor.toFixed(2)}, ` +
        `fastest runs ${(fastest(c.results.sax, 'wallMs') / fastest(o, 'wallMs')).toFixed(2)}` +
        (c.results['sax-bare']?.median
          ? `; against sax with no handlers at all: ${pairedRatio(c.results['sax-bare'], o, 'wallMs').toFixed(2)}`
          : ''),
    );
  }

  const big = byId['site-big'];
  const ob = ours(big);
  if (ob) {
    const cr = big.results.crawlee?.median;
    add(
      `${num(big.urls)}-URL site: ≥ 2× faster than crawlee`,
      cr ? cr.wallMs / ob.median.wallMs >= 2 : null,
      cr
        ? `${s2(ob.median.wallMs)} vs ${s2(cr.wallMs)} = ${(cr.wallMs / ob.median.wallMs).toFixed(2)}× (by CPU time: ${(cr.cpuMs / ob.median.cpuMs).toFixed(2)}×)`
        : 'crawlee did not finish',
    );
    const uspMs = QUOTED.uspBigSiteWallS * 1000;
    add(
      `${num(big.urls)}-URL site: ≥ 4× faster than usp (30.7 s, quoted)`,
      results.profile === 'full' ? uspMs / ob.median.wallMs >= 4 : null,
      `${s2(ob.median.wallMs)} vs 30.7 s quoted = ${(uspMs / ob.median.wallMs).toFixed(2)}×`,
    );
    add(
      `${num(big.urls)}-URL site: peak RSS < 100 MiB`,
      ob.median.maxRssKiB < 100 * MIB,
      `${mib(ob.median.maxRssKiB)}`,
    );
  } else add('1M-URL site targets', null, big ? 'our runner did not finish' : 'not run');

  const bbc = byId['site-bbc'];
  const obb = ours(bbc);
  if (obb) {
    add(`BBC-sized site (${num(bbc.urls)} URLs): < 30 s`, obb.median.wallMs < 30_000, s2(obb.median.wallMs));
    add(`BBC-sized site: peak RSS < 100 MiB`, obb.median.maxRssKiB < 100 * MIB, mib(obb.median.maxRssKiB));
  } else add('BBC-sized site targets', null, bbc ? 'our runner did not finish' : 'not run');

  const scale = results.cases.filter((c) => c.scale && ours(c)).sort((a, b) => a.urls - b.urls);
  if (scale.length >= 2) {
    const per = scale.map((c) => ours(c).usPerUrl);
    const rss = scale.map((c) => ours(c).median.maxRssKiB);
    const spread = (xs) => Math.max(...xs) / Math.min(...xs);
    const sizes = scale.map((c) => num(c.urls)).join(' / ');
    add(
      `scaling ${sizes}: time per URL flat within 20%`,
      spread(per) <= 1.2,
      `${per.map((v) => `${v.toFixed(2)} µs`).join(' / ')} (max/min ${spread(per).toFixed(2)})`,
    );
    add(
      `scaling ${sizes}: peak RSS flat within 20%`,
      spread(rss) <= 1.2,
      `${rss.map((v) => mib(v)).join(' / ')} (max/min ${spread(rss).toFixed(2)})`,
    );
  } else add('scaling targets', null, 'fewer than two site sizes measured for us');

  addCliTargets(byId, add);

  for (const [id, what] of [
    ['image-http', 'image sitemap'],
    ['news-http', 'news sitemap'],
  ]) {
    const c = byId[id];
    const o = ours(c);
    if (!o) {
      add(`${what}: faster than every peer`, null, c ? 'our runner did not finish' : 'not run');
      continue;
    }
    const peers = ['crawlee', 'sitemapper'].map((p) => [p, c.results[p]]);
    const beaten = peers.every(([, r]) => !r?.median || r.median.wallMs > o.median.wallMs);
    add(
      `${what}: faster than every peer`,
      beaten,
      `${s2(o.median.wallMs)} vs ${peers.map(([p, r]) => `${p} ${r?.median ? s2(r.median.wallMs) : 'failed'}`).join(', ')}`,
    );
  }
  return t;
}

/** Issue 19's targets: `usp ls` as a process, beside crawlee's script in the same rounds. */
function addCliTargets(byId, add) {
  const big = byId['cli-big'];
  const usp = big?.results?.['cli-tabtree'];
  const cr = big?.results?.['crawlee-proc'];
  if (!usp?.median || !cr?.median) {
    add('`usp ls` on the 1M-URL site (issue 19)', null, big ? 'a run failed' : 'not run');
    return;
  }
  // crawlee's wall time over ours, paired by round: 2 means usp ls took half crawlee's time.
  const ratio = pairedRatio(cr, usp, 'wallMs');
  add(
    '`usp ls` (tabtree), 1M-URL site: ≥ 2× crawlee’s wall time',
    ratio >= 2,
    `${s2(usp.median.wallMs)} vs ${s2(cr.median.wallMs)}; crawlee ÷ usp ${ratio.toFixed(2)}× (median of per-round ratios)`,
  );
  add(
    '`usp ls` (tabtree), 1M-URL site: CPU per URL below crawlee’s',
    usp.cpuUsPerUrl < cr.cpuUsPerUrl,
    `${usp.cpuUsPerUrl.toFixed(2)} vs ${cr.cpuUsPerUrl.toFixed(2)} µs`,
  );
  add(
    '`usp ls` (tabtree), 1M-URL site: peak RSS below crawlee’s',
    usp.median.maxRssKiB < cr.median.maxRssKiB,
    `${mib(usp.median.maxRssKiB)} vs ${mib(cr.median.maxRssKiB)}`,
  );
  const oneThread = big.results['cli-w0'];
  if (oneThread?.median) {
    add(
      '`usp ls` one-thread mode, 1M-URL site: peak RSS ≤ 100 MiB',
      oneThread.median.maxRssKiB <= 100 * MIB,
      `${mib(oneThread.median.maxRssKiB)} (${oneThread.label})`,
    );
  }
  for (const id of ['cli-200k', 'cli-bbc']) {
    const r = byId[id]?.results?.['cli-tabtree'];
    if (!r?.median) continue;
    const ofMedians = r.cpuUsPerUrl / usp.cpuUsPerUrl;
    // Run in the same rounds as the 1M site, the check takes the median of the per-round ratios
    // (the two sites back to back); otherwise, as before, the ratio of the two medians.
    const paired = sameRoundRatios(byId[id], big, 'cli-tabtree');
    const cpu = paired?.median ?? ofMedians;
    const rss = r.median.maxRssKiB / usp.median.maxRssKiB;
    const how = paired
      ? `${cpu.toFixed(2)}×, median of ${paired.n} per-round ratios (${paired.min.toFixed(2)}–${paired.max.toFixed(2)}); ratio of medians ${ofMedians.toFixed(2)}×`
      : `${cpu.toFixed(2)}×, ratio of medians (not run in the same rounds)`;
    add(
      // "Flat" is read as "does not grow with the site": a smaller site peaking lower passes.
      `\`usp ls\` on the ${num(byId[id].urls)}-URL site: CPU per URL within 15% of the 1M site’s, peak RSS flat (at most 1.2× the 1M site’s)`,
      Math.abs(cpu - 1) <= 0.15 && rss <= 1.2,
      `${r.cpuUsPerUrl.toFixed(2)} vs ${usp.cpuUsPerUrl.toFixed(2)} µs (${how}); ${mib(r.median.maxRssKiB)} vs ${mib(usp.median.maxRssKiB)}`,
    );
  }
}

/**
 * CPU per URL on `small` ÷ on `big` for one implementation, taken within each round the two
 * cases shared (each implementation ran on both sites back to back): { median, min, max, n }, or
 * null when the cases did not run in the same rounds.
 */
export function sameRoundRatios(small, big, implId) {
  if (!small?.sameRounds?.includes(big?.id)) return null;
  const a = small.results?.[implId]?.runs ?? [];
  const b = big.results?.[implId]?.runs ?? [];
  const ratios = [];
  for (const x of a) {
    const y = b.find((z) => z.round === x.round);
    if (x.ok && y?.ok) ratios.push(x.cpuMs / small.urls / (y.cpuMs / big.urls));
  }
  const sp = spreadOf(ratios);
  return sp === null ? null : { ...sp, n: ratios.length };
}

/** Each implementation's CPU per URL on the other sites ÷ on the 1M site, per round (issue 19). */
function sameRoundTable(byId) {
  const big = byId['cli-big'];
  const others = ['cli-200k', 'cli-bbc']
    .map((id) => byId[id])
    .filter((c) => c?.sameRounds?.includes('cli-big'));
  if (big === undefined || others.length === 0) return null;
  const L = [
    `| implementation | ${others.map((c) => `${num(c.urls)} ÷ 1M, CPU per URL`).join(' | ')} |`,
    `| --- | ${others.map(() => '---').join(' | ')} |`,
  ];
  for (const [id, r] of Object.entries(big.results)) {
    const cells = others.map((c) => {
      const sp = sameRoundRatios(c, big, id);
      return sp === null
        ? '–'
        : `${sp.median.toFixed(2)} (${sp.min.toFixed(2)}–${sp.max.toFixed(2)}, ${sp.n} rounds)`;
    });
    L.push(`| ${r.label} | ${cells.join(' | ')} |`);
  }
  return L.join('\n');
}

function spreadOf(xs) {
  return xs.length === 0 ? null : { median: medianOf(xs), min: Math.min(...xs), max: Math.max(...xs) };
}

/**
 * Before/after: for each of our rows with a `[baseline]` twin, the median over rounds of this
 * build ÷ the baseline (the two ran back to back), with the range over rounds.
 */
export function baselineRows(c) {
  const rows = [];
  for (const [id, r] of Object.entries(c.results)) {
    const base = c.results[`${id}@base`];
    if (base === undefined) continue;
    const per = { wallMs: [], cpuMs: [], maxRssKiB: [] };
    for (let i = 0; i < Math.min(r.runs.length, base.runs.length); i++) {
      if (!r.runs[i].ok || !base.runs[i].ok) continue;
      for (const f of Object.keys(per)) per[f].push(r.runs[i][f] / base.runs[i][f]);
    }
    const floor = c.results[c.mode === 'process' ? 'sax-proc' : 'sax'];
    rows.push({
      id,
      label: r.label,
      pairs: per.wallMs.length,
      wall: spreadOf(per.wallMs),
      cpu: spreadOf(per.cpuMs),
      rss: spreadOf(per.maxRssKiB),
      before: base.median ?? null,
      after: r.median ?? null,
      floorRatio: floor
        ? { before: pairedRatio(floor, base, 'wallMs'), after: pairedRatio(floor, r, 'wallMs') }
        : null,
    });
  }
  return rows;
}

function baselineTable(c) {
  const rows = baselineRows(c);
  if (rows.length === 0) return null;
  const f = (sp) =>
    sp === null ? '–' : `${sp.median.toFixed(2)} (${sp.min.toFixed(2)}–${sp.max.toFixed(2)})`;
  const L = [
    '| row | pairs | before: wall · CPU · RSS | after: wall · CPU · RSS | after ÷ before, wall | CPU | peak RSS | floor ÷ row, before → after |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const m = (x) => (x ? `${s2(x.wallMs)} · ${s2(x.cpuMs)} · ${mib(x.maxRssKiB)}` : 'failed');
  for (const r of rows) {
    const fr =
      r.floorRatio && r.floorRatio.before != null && r.floorRatio.after != null
        ? `${r.floorRatio.before.toFixed(2)} → ${r.floorRatio.after.toFixed(2)}`
        : '–';
    L.push(
      `| ${r.label} | ${r.pairs} | ${m(r.before)} | ${m(r.after)} | ${f(r.wall)} | ${f(r.cpu)} | ${f(r.rss)} | ${fr} |`,
    );
  }
  return L.join('\n');
}

function caseTable(c) {
  const rows = [
    '| implementation | ok runs | wall (median) | CPU user+sys | CPU µs/URL | peak RSS | URLs/s | MB/s | time ÷ floor | crawlee time ÷ this | sitemapper time ÷ this |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of Object.values(c.results)) {
    if (!r.median) {
      const why = r.unsupported ? 'no API for this input' : (r.failures[0] ?? 'failed');
      rows.push(
        `| ${r.label} | 0/${r.runs.length} | ${why.replace(/\|/g, '/').slice(0, 160)} | | | | | | | | |`,
      );
      continue;
    }
    const mism = r.countMismatch ? ` ⚠ ${r.urls} URLs` : '';
    const pr = r.peerTimeOverThis ?? {};
    rows.push(
      `| ${r.label}${mism} | ${r.okRuns}/${r.runs.length} | ${s2(r.median.wallMs)} | ${s2(r.median.cpuMs)} | ${r.cpuUsPerUrl == null ? '–' : r.cpuUsPerUrl.toFixed(2)} | ${mib(r.median.maxRssKiB)} | ${num(r.urlsPerS)} | ${mbs(r.mbPerS)} | ${x(r.timeVsFloor)} | ${x(pr.crawlee)} | ${x(pr.sitemapper)} |`,
    );
  }
  return rows.join('\n');
}

export function renderMarkdown(results) {
  const targets = computeTargets(results);
  const m = results.machine;
  const L = [];
  L.push('# Benchmark results', '');
  L.push(
    `Generated by \`${results.command}\` on ${results.generatedAt.slice(0, 10)}: ${m.cpus} × ${m.cpuModel}, ${m.memGiB} GiB, Node ${m.node}, ${m.platform}. ` +
      `Profile \`${results.profile}\`; runs per input: ${results.options.runs} (1M site ${results.options.bigRuns}, BBC-sized ${results.options.bbcRuns}); per-run timeout ${results.options.timeoutS} s; whole bench ${results.totalSeconds.toFixed(0)} s.`,
    '',
  );
  if (results.profile !== 'full') L.push('**Quick mode: small inputs, one run. Not the real figures.**', '');
  if (m.loadAverage1mBefore !== undefined) {
    const busy = Math.max(m.loadAverage1mBefore, m.loadAverage1mAfter) > m.cpus * 0.75;
    L.push(
      `Load average (1 min) before / after: ${m.loadAverage1mBefore} / ${m.loadAverage1mAfter}${busy ? ' — **the machine was busy with other work: wall times are inflated; CPU times and RSS are more telling**' : ''}.`,
      '',
    );
  }
  L.push('![time and peak memory against number of URLs](chart.svg)', '');
  L.push('## Targets (issues 3 and 7)', '', '| target | status | figures |', '| --- | --- | --- |');
  for (const t of targets) L.push(`| ${t.name} | **${t.status}** | ${t.detail} |`);
  L.push('');

  const big = results.cases.find((c) => c.id === 'site-big');
  const w = big?.results;
  const med = (id) => w?.[id]?.median?.wallMs;
  if (med('ours') && med('ours-w0')) {
    L.push('## Worker threads', '');
    const row = (id, label) => (med(id) ? `${label} ${s2(med(id))}` : null);
    L.push(
      `On the ${num(big.urls)}-URL site: ${[
        row('ours-w0', 'one parsing thread (everything in-thread)'),
        row('ours', 'two parsing threads (the default: this thread and one worker)'),
        row('ours-w1', 'one worker'),
        row('ours-w2', 'two workers'),
      ]
        .filter(Boolean)
        .join(', ')}. ` +
        `Two parsing threads are ${(med('ours-w0') / med('ours')).toFixed(2)}× as fast as one` +
        (med('ours-w1') && med('ours-w2')
          ? `; two workers are ${(med('ours-w1') / med('ours-w2')).toFixed(2)}× as fast as one worker.`
          : '.'),
      '',
    );
  }

  L.push('## Per input', '');
  L.push(
    'Median of the runs. Wall and CPU time cover the work only (libraries loaded and, for in-memory documents, bytes read before the clock starts); CPU counts every thread of the process; peak RSS is the process maximum (`process.resourceUsage().maxRSS`). ' +
      'MB/s is decompressed XML per wall second. "time ÷ floor" is wall time over sax’s; "peer time ÷ this" above 1 means this row is faster than that peer.',
    '',
  );
  for (const c of results.cases) {
    L.push(`### ${c.title}`, '');
    L.push(
      `${c.urls.toLocaleString('en-US')} URLs, ${(c.bytes / 1e6).toFixed(1)} MB of XML${c.fileBytes !== c.bytes ? ` (${(c.fileBytes / 1e6).toFixed(1)} MB on the wire)` : ''}, ${c.runs} run${c.runs > 1 ? 's' : ''} each.`,
      '',
    );
    L.push(caseTable(c), '');
    const ab = baselineTable(c);
    if (ab !== null) {
      L.push(
        'Before/after (this build against the `--baseline` build, run back to back in each round): medians of the per-round ratios, range in brackets; below 1 is better.',
        '',
        ab,
        '',
      );
    }
  }

  const sameRounds = sameRoundTable(Object.fromEntries(results.cases.map((c) => [c.id, c])));
  if (sameRounds !== null) {
    L.push(
      '## Whole processes: smaller and larger sites against the 1M site, in the same rounds',
      '',
      'Each implementation ran on the sites back to back in every round (site order swapped between rounds); each figure is the median over rounds of CPU per URL on that site ÷ CPU per URL on the 1M site in the same round, range in brackets. Issue 19 wants `usp ls` within 15 % (0.85–1.15); the peers and the floor show what a fresh Node process pays for its start-up and warm-up on fewer URLs.',
      '',
      sameRounds,
      '',
    );
  }

  const scale = results.cases.filter((c) => c.scale).sort((a, b) => a.urls - b.urls);
  if (scale.length > 0) {
    L.push('## Scaling (sites, streamed)', '');
    const impls = ['ours', 'crawlee', 'sitemapper', 'sax'];
    L.push(
      `| URLs | ${impls.map((i) => `${scale[0].results[i]?.label ?? i} µs/URL · RSS`).join(' | ')} |`,
      `| --- | ${impls.map(() => '---').join(' | ')} |`,
    );
    for (const c of scale) {
      const cells = impls.map((i) => {
        const r = c.results[i];
        return r?.median ? `${r.usPerUrl.toFixed(2)} · ${mib(r.median.maxRssKiB)}` : r ? 'failed' : '–';
      });
      L.push(`| ${num(c.urls)} | ${cells.join(' | ')} |`);
    }
    L.push('');
  }

  L.push('## Quoted reference figures (not measured here)', '');
  L.push(`Source: ${QUOTED.source}.`, '');
  L.push('1,000,000-URL site:', '', '| implementation | wall | peak RSS |', '| --- | --- | --- |');
  for (const q of QUOTED.bigSite)
    L.push(`| ${q.impl} | ${q.wallS} s | ${q.rssMiB == null ? '–' : `${q.rssMiB} MiB`} |`);
  L.push('', '10,000-URL image sitemap over HTTP:', '', '| implementation | wall |', '| --- | --- |');
  for (const q of QUOTED.image10k) L.push(`| ${q.impl} | ${q.wallS} s |`);
  L.push(
    '',
    `crawlee's string input (\`{ type: 'raw' }\`) hashes the whole string for every URL it yields: 50,000 URLs took ${QUOTED.crawleeString50kS} s, so it is not run here; the in-memory document rows compare us with sax only.`,
    '',
  );
  L.push('## How each implementation is run', '');
  L.push(
    '- Every run is a fresh `node` process (`bench/src/runner.mjs`); implementations alternate within each round and the order rotates between rounds.',
    '- **usp-ts**: sites with `walkPages(homepage)` from the `usp` package (robots.txt, then the known paths, then every sitemap), the consumer counts pages; single URLs with `walkSitemapPages(url)`; in-memory documents with `parseSitemapDocument` (gzip told by its magic bytes and inflated by `nodeGunzip`), pages counted by `countingPageStore()`. The fetcher loads undici with its first client, so for the HTTP and site cases one client is created and closed before the clock (the peers load their HTTP stacks at import). By default (the `ours` row) a walk parses one large document in its own thread and a second one in flight on one worker thread (`parseWorkers: 1`); the worker rows set the parser explicitly (`ours-w0`: everything in-thread).',
    "- **crawlee**: `parseSitemap(sources, undefined, { enqueueStrategy: 'all', sitemapRetries: 0 })` from `@crawlee/utils`; sites read robots.txt with crawlee's `RobotsTxtFile.find` and pass its sitemaps. `enqueueStrategy: 'all'` because the default would drop every page whose host differs from 127.0.0.1.",
    '- **sitemapper**: `new Sitemapper({ url, timeout, concurrency: 4, fields: { loc, lastmod, changefreq, priority } }).fetch()`; it has no robots.txt support, so sites read the `Sitemap:` lines first and fetch each in turn.',
    '- **floor**: sax 1.6 in strict mode with `position: false`, no xmlns, with empty handlers for open tag, close tag, text and CDATA (the floor issue 3 names), over the same bytes (fetched over HTTP and gunzipped with 64 KiB chunks for the HTTP and site inputs; every document of a site one after the other). The in-memory document cases also run **sax with no handlers** (info): sax then makes no call per event, which is faster than any reader can be.',
    '- Inputs are generated from a fixed seed (`bench/src/generate.mjs`) and served by `bench/src/server.mjs` on 127.0.0.1 with keep-alive; `.xml.gz` files go out as `application/gzip` bodies.',
    '',
  );
  return { md: `${L.join('\n')}\n`, targets };
}

/** The summary the root README shows between its `<!-- bench:results -->` markers. */
export function renderReadmeSection(results) {
  const byId = Object.fromEntries(results.cases.map((c) => [c.id, c]));
  const L = [];
  const m = results.machine;
  L.push(
    `Measured by \`pnpm bench\` on ${results.generatedAt.slice(0, 10)} (${m.cpus} × ${m.cpuModel}, Node ${m.node}), inputs generated from a fixed seed and served over loopback; median of several runs, each in a fresh process. Full tables, methodology and quoted figures: [bench/results/results.md](bench/results/results.md).`,
    '',
    '![Wall time and peak RSS against the number of URLs, usp-ts and the peers](bench/results/chart.svg)',
    '',
  );
  if (Math.max(m.loadAverage1mBefore ?? 0, m.loadAverage1mAfter ?? 0) > m.cpus * 0.75) {
    L.push(
      `_This run shared the machine with other work (load average ${m.loadAverage1mBefore} before, ${m.loadAverage1mAfter} after, on ${m.cpus} cores): wall times are inflated and noisy; the CPU times in results.md are steadier._`,
      '',
    );
  }
  const rows = ['ours', 'crawlee', 'sitemapper', 'sax'];
  const sites = ['site-big', 'site-bbc'].map((id) => byId[id]).filter(Boolean);
  if (sites.length > 0) {
    L.push(
      `| | ${sites.map((c) => `${num(c.urls)} URLs: wall · peak RSS`).join(' | ')} |`,
      `| --- | ${sites.map(() => '---').join(' | ')} |`,
    );
    for (const id of rows) {
      const cells = sites.map((c) => {
        const r = c.results[id];
        if (!r) return '–';
        return r.median ? `${s2(r.median.wallMs)} · ${mib(r.median.maxRssKiB)}` : 'failed';
      });
      const label = sites[0].results[id]?.label ?? id;
      L.push(`| ${label} | ${cells.join(' | ')} |`);
    }
    L.push(`| usp 1.8.1, Python (quoted, not measured here) | 30.7 s · 143 MiB | – |`, '');
  }
  L.push('| target (issues 3 and 7) | status | figures |', '| --- | --- | --- |');
  for (const t of results.targets ?? []) L.push(`| ${t.name} | ${t.status} | ${t.detail} |`);
  return L.join('\n');
}

export function spliceReadme(readme, section) {
  const start = '<!-- bench:results -->';
  const end = '<!-- /bench:results -->';
  const a = readme.indexOf(start);
  const b = readme.indexOf(end);
  if (a < 0 || b < a) return null;
  return `${readme.slice(0, a + start.length)}\n${section}\n${readme.slice(b)}`;
}
