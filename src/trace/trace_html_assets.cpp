// The look and behaviour of the trace page (trace_html.h). Plain CSS and dependency-free
// JavaScript; every token string is inserted with textContent, never innerHTML.
namespace journey {

extern const char* const kTraceCss;
extern const char* const kTraceJs;

const char* const kTraceCss = R"CSS(
:root { --ink:#1f2937; --muted:#6b7280; --line:#e5e7eb; --accent:#dc2626; --bg:#fafafa; }
* { box-sizing: border-box; }
body { margin: 0; padding: 20px 28px 40px; font: 14px/1.45 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 16px; margin: 26px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 13px; margin: 14px 0 4px; color: var(--muted); font-weight: 600; }
.note { color: var(--muted); font-size: 12px; margin: 2px 0 8px; }
.tokens { display: flex; flex-wrap: wrap; gap: 4px; }
.tok { font-family: ui-monospace, monospace; font-size: 12.5px; background: #fff; border: 1px solid var(--line);
       border-radius: 4px; padding: 1px 5px; white-space: pre; }
.tok sub { color: var(--muted); font-size: 9px; margin-left: 3px; }
.tok.traced { border-color: var(--accent); background: #fee2e2; font-weight: 700; }
.facts { display: flex; gap: 22px; flex-wrap: wrap; margin-top: 8px; }
.facts div b { font-family: ui-monospace, monospace; }
table.lens { border-collapse: collapse; font-size: 12px; }
table.lens th, table.lens td { border: 1px solid var(--line); padding: 2px 5px; text-align: left; }
table.lens th { background: #f3f4f6; font-weight: 600; }
table.lens td.cell { font-family: ui-monospace, monospace; white-space: pre; min-width: 70px; }
table.lens td.cell small { display: block; font-size: 10px; opacity: .8; }
table.lens td.target { outline: 2px solid var(--accent); outline-offset: -2px; }
table.lens td.num { text-align: right; font-variant-numeric: tabular-nums; }
svg text { font: 11px system-ui, sans-serif; fill: var(--ink); }
.legend span { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; margin: 0 4px 0 12px; border-radius: 2px; }
.layer-att { margin: 0 18px 4px 0; }
.heads { display: flex; flex-wrap: wrap; gap: 10px; }
.head { text-align: center; font-size: 11px; color: var(--muted); }
.head canvas { display: block; border: 1px solid var(--line); background: #fff; }
table.attr td.num { font-family: ui-monospace, monospace; font-size: 11px; text-align: right; padding: 2px 4px;
                    border: 1px solid var(--line); min-width: 52px; }
table.attr th { font-size: 11px; padding: 2px 4px; background: #f3f4f6; border: 1px solid var(--line); }
table.attr { border-collapse: collapse; }
#js-errors { color: #fff; background: var(--accent); padding: 8px; }
)CSS";

const char* const kTraceJs = R"JS(
'use strict';
function reportError(msg) {
  let p = document.getElementById('js-errors');
  if (!p) { p = document.createElement('pre'); p.id = 'js-errors'; document.body.prepend(p); }
  p.textContent += msg + '\n';
  document.body.dataset.status = 'error';
}
window.addEventListener('error', e => reportError(String(e.message)));

const SVGNS = 'http://www.w3.org/2000/svg';
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}
// Token text as a reader wants to see it: spaces and control characters made visible.
function shown(t) {
  return t.replace(/ /g, '\u2423').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r');
}
function clip(t, n) { return t.length > n ? t.slice(0, n - 1) + '\u2026' : t; }
function fix(x, d) { return (typeof x === 'number' && isFinite(x)) ? x.toFixed(d) : '\u2013'; }
// 0..1 -> white..deep blue; text turns white on dark cells.
function heat(v) { v = Math.max(0, Math.min(1, v)); return `hsl(222, ${40 + 45 * v}%, ${98 - 62 * v}%)`; }
function ink(v) { return v > 0.55 ? '#fff' : '#1f2937'; }

function section(app, title, note) {
  app.appendChild(el('h2', '', title));
  if (note) app.appendChild(el('p', 'note', note));
}

function renderPrompt(app, d) {
  section(app, 'Prompt', 'Each token with its position; the traced token is outlined.');
  const box = el('div', 'tokens');
  d.tokens.forEach((t, i) => {
    const s = el('span', 'tok' + (i === d.position ? ' traced' : ''), shown(t.token));
    s.appendChild(el('sub', '', String(i)));
    s.title = `position ${i}, id ${t.id}`;
    box.appendChild(s);
  });
  app.appendChild(box);
  const f = el('div', 'facts');
  const fact = (label, value) => { const x = el('div', '', label + ' '); x.appendChild(el('b', '', value)); f.appendChild(x); };
  const at = d.tokens[d.position];
  fact('traced position', `${d.position} (${shown(at.token)})`);
  fact('target', `${shown(d.target.token)} #${d.target.id}, final rank ${d.target.final_rank}, p ${fix(d.target.final_prob, 4)}`);
  const e = d.embedding;
  fact('|token emb|', fix(e.token_norm, 3));
  fact('|position emb|', e.position_norm === null ? 'rotary (in attention)' : fix(e.position_norm, 3));
  fact('|embed|', fix(e.sum_norm, 3));
  app.appendChild(f);
}

function renderNorms(app, d) {
  section(app, 'Residual stream norms', 'L2 norm at the traced position after each stage; dots: what attention and the MLP added.');
  const pts = [{label: 'embed', v: d.embedding.sum_norm}];
  const attn = [], mlp = [];
  d.layers.forEach(l => {
    attn.push({x: pts.length, v: l.attn.out_norm});
    pts.push({label: `L${l.layer} mid`, v: l.resid_mid.norm});
    mlp.push({x: pts.length, v: l.mlp.out_norm});
    pts.push({label: `L${l.layer} post`, v: l.resid_post.norm});
  });
  const W = 1100, H = 250, L = 56, R = 16, T = 14, B = 50;
  const all = pts.map(p => p.v).concat(attn.map(p => p.v), mlp.map(p => p.v)).filter(isFinite);
  const ymax = Math.max(1e-9, ...all) * 1.08;
  const x = i => L + (pts.length === 1 ? 0 : i * (W - L - R) / (pts.length - 1));
  const y = v => T + (H - T - B) * (1 - v / ymax);
  const s = svgEl('svg', {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img'});
  for (let k = 0; k <= 4; ++k) {
    const v = ymax * k / 4;
    s.appendChild(svgEl('line', {x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#e5e7eb'}));
    s.appendChild(svgEl('text', {x: L - 6, y: y(v) + 4, 'text-anchor': 'end'}, v.toFixed(v < 10 ? 2 : 1)));
  }
  const every = Math.max(1, Math.ceil(pts.length / 26));
  pts.forEach((p, i) => {
    if (i % every) return;
    s.appendChild(svgEl('text', {x: x(i), y: H - B + 14, 'text-anchor': 'end',
                                 transform: `rotate(-35 ${x(i)} ${H - B + 14})`}, p.label));
  });
  s.appendChild(svgEl('polyline', {points: pts.map((p, i) => `${x(i)},${y(p.v)}`).join(' '),
                                   fill: 'none', stroke: '#2563eb', 'stroke-width': 2}));
  pts.forEach((p, i) => {
    const c = svgEl('circle', {cx: x(i), cy: y(p.v), r: 3, fill: '#2563eb'});
    c.appendChild(svgEl('title', {}, `${p.label}: ${fix(p.v, 4)}`));
    s.appendChild(c);
  });
  const dots = (list, color, name) => list.forEach(p => {
    const c = svgEl('rect', {x: x(p.x) - 4, y: y(p.v) - 4, width: 8, height: 8, fill: color});
    c.appendChild(svgEl('title', {}, `${name} (into ${pts[p.x].label}): ${fix(p.v, 4)}`));
    s.appendChild(c);
  });
  dots(attn, '#f59e0b', '|attn_out|');
  dots(mlp, '#10b981', '|mlp_out|');
  app.appendChild(s);
  const lg = el('div', 'legend note');
  [['#2563eb', 'residual'], ['#f59e0b', 'attention output'], ['#10b981', 'MLP output']].forEach(([c, n]) => {
    const sw = el('span'); sw.style.background = c; lg.appendChild(sw); lg.appendChild(document.createTextNode(n));
  });
  app.appendChild(lg);
}

// The lens's target: the trace's (d.target), or a token the reader clicked in the grid.
const lensState = {id: null};
function renderLens(app, d) {
  section(app, 'Logit lens', 'Final norm + unembedding applied to the residual stream after each layer. ' +
          'Cells: the most likely tokens, shaded by probability; the target is outlined in red. ' +
          'Click a cell (or focus it and press Enter) to follow that token instead; click it again to go back.');
  const k = d.final.top.length;
  const tgt = lensState.id === null ? d.target.id : lensState.id;
  const t = el('table', 'lens');
  t.id = 'lens';
  t.dataset.target = String(tgt);
  const head = el('tr');
  ['layer'].concat(Array.from({length: k}, (_, i) => `#${i + 1}`), ['target rank', 'target p', 'entropy', 'KL(final\u2016lens)'])
    .forEach(h => head.appendChild(el('th', '', h)));
  t.appendChild(head);
  // Where the chosen token is not the trace's target, its rank and p are known within the top cells only.
  const follow = (top, rank, prob) => {
    if (tgt === d.target.id) return [String(rank), fix(prob, 4)];
    const i = top.findIndex(c => c.id === tgt);
    return i >= 0 ? [String(i + 1), fix(top[i].prob, 4)] : [`> ${top.length}`, `< ${fix(top[top.length - 1].prob, 4)}`];
  };
  const row = (label, top, extra) => {
    const tr = el('tr');
    tr.appendChild(el('th', '', label));
    top.forEach(c => {
      const td = el('td', 'cell' + (c.id === tgt ? ' target' : ''), clip(shown(c.token), 14));
      td.appendChild(el('small', '', fix(c.prob, 3)));
      const v = Math.sqrt(c.prob);
      td.style.background = heat(v);
      td.style.color = ink(v);
      td.title = `id ${c.id}, p ${c.prob}`;
      td.tabIndex = 0;
      td.dataset.id = String(c.id);
      const pick = () => { lensState.id = c.id === tgt && lensState.id !== null ? null : c.id; const n = renderLensAgain(t, d); n.querySelector(`td[data-id="${c.id}"]`)?.focus(); };
      td.addEventListener('click', pick);
      td.addEventListener('keydown', e => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); } });
      tr.appendChild(td);
    });
    for (let i = top.length; i < k; ++i) tr.appendChild(el('td'));  // a shorter lens (--pos all keeps 3)
    extra.forEach(x => tr.appendChild(el('td', 'num', x)));
    t.appendChild(tr);
  };
  d.layers.forEach(l => row(`L${l.layer}`, l.lens.top,
    follow(l.lens.top, l.lens.target_rank, l.lens.target_prob).concat([fix(l.lens.entropy, 3), fix(l.lens.kl_to_final, 3)])));
  row('final', d.final.top, follow(d.final.top, d.target.final_rank, d.target.final_prob).concat([fix(d.final.entropy, 3), '0.000']));
  app.appendChild(t);
}
// Re-draws the lens table in place (the section's heading and note stay).
function renderLensAgain(table, d) {
  const tmp = el('div');
  renderLens(tmp, d);
  const fresh = tmp.querySelector('table');
  table.replaceWith(fresh);
  return fresh;
}

// A mixture of experts: per layer, the experts the traced token went to, shaded by weight.
function renderExperts(app, d) {
  if (!d.layers.some(l => l.moe)) return;
  section(app, 'Experts', 'Per layer, the experts the router sent the traced token to, in the order it chose them, ' +
          'with their weights (summing to 1), and the entropy (nats) of the router over all experts.');
  const t = el('table', 'lens');
  const k = Math.max(...d.layers.map(l => l.moe ? l.moe.experts.length : 0));
  const head = el('tr');
  ['layer'].concat(Array.from({length: k}, (_, i) => `#${i + 1}`), ['router entropy']).forEach(h => head.appendChild(el('th', '', h)));
  t.appendChild(head);
  d.layers.filter(l => l.moe).forEach(l => {
    const tr = el('tr');
    tr.appendChild(el('th', '', `L${l.layer}`));
    l.moe.experts.forEach(e => {
      const td = el('td', 'cell', `expert ${e.id}`);
      td.appendChild(el('small', '', fix(e.weight, 3)));
      td.style.background = heat(e.weight);
      td.style.color = ink(e.weight);
      td.title = `expert ${e.id}, weight ${e.weight}`;
      tr.appendChild(td);
    });
    tr.appendChild(el('td', 'num', fix(l.moe.router_entropy, 3)));
    t.appendChild(tr);
  });
  app.appendChild(t);
}

// One layer: heads x keys at the traced position, as an SVG heatmap with token labels.
function renderTracedAttention(app, d) {
  section(app, 'Attention at the traced position', 'Rows: heads; columns: the keys the traced token can see. ' +
          'Right: entropy (nats) and the norm of the head\u2019s output through W_O.');
  if (d.layers.some(l => l.attn.heads.some(h => !h.pattern))) {
    app.appendChild(el('p', 'note', 'The attention rows at this position are not in the page (whole patterns left out at this ' +
                    'size): journey trace --pos ' + d.position + ' --html shows them.'));
    return;
  }
  const n = d.position + 1, cw = Math.max(10, Math.min(30, Math.floor(560 / n))), ch = 16;
  const grid = el('div', 'heads');
  d.layers.forEach(l => {
    if (l.attn.mixer === 'gated_delta_net') {  // a hybrid's linear-attention layer: its heads' gates and state
      const box = el('div', 'layer-att');
      box.appendChild(el('h3', '', `Layer ${l.layer}  \u00b7  Gated DeltaNet  \u00b7  |attn_out| ${fix(l.attn.out_norm, 3)}`));
      const t = el('table', '');
      const hr = el('tr', '');
      ['head', 'beta', 'decay g', '|state|', '|out|'].forEach(x => hr.appendChild(el('th', '', x)));
      t.appendChild(hr);
      l.attn.delta_heads.forEach(h => {
        const r = el('tr', '');
        [`h${h.head}`, fix(h.beta, 3), fix(h.g, 3), fix(h.state_norm, 3), fix(h.out_norm, 3)].forEach(x => r.appendChild(el('td', '', x)));
        t.appendChild(r);
      });
      box.appendChild(t);
      grid.appendChild(box);
      return;
    }
    const H = l.attn.heads.length, left = 44, top = 18, bottom = 70, right = 110;
    const W = left + n * cw + right, Ht = top + H * ch + bottom, x0 = left + n * cw + 8;
    const box = el('div', 'layer-att');
    box.appendChild(el('h3', '', `Layer ${l.layer}  \u00b7  |attn_out| ${fix(l.attn.out_norm, 3)}` +
                       (l.attn.output_gate_mean !== undefined ? `  \u00b7  output gate ${fix(l.attn.output_gate_mean, 3)}` : '')));
    const s = svgEl('svg', {width: W, height: Ht, viewBox: `0 0 ${W} ${Ht}`});
    s.appendChild(svgEl('text', {x: x0, y: top - 5}, 'H'));
    s.appendChild(svgEl('text', {x: x0 + 44, y: top - 5}, '|out|'));
    l.attn.heads.forEach((h, r) => {
      const y = top + r * ch + 12;
      s.appendChild(svgEl('text', {x: left - 6, y: y, 'text-anchor': 'end'}, `h${h.head}`));
      for (let k = 0; k < n; ++k) {
        const w = h.pattern[k];
        const c = svgEl('rect', {x: left + k * cw, y: top + r * ch, width: cw - 1, height: ch - 1, fill: heat(Math.sqrt(w))});
        c.appendChild(svgEl('title', {}, `head ${h.head} \u2192 ${k} ${shown(d.tokens[k].token)}: ${fix(w, 4)}`));
        s.appendChild(c);
      }
      s.appendChild(svgEl('text', {x: x0, y: y}, fix(h.entropy, 2)));
      s.appendChild(svgEl('text', {x: x0 + 44, y: y}, fix(h.out_norm, 2)));
    });
    for (let k = 0; k < n; ++k) {
      const cx = left + k * cw + cw / 2, cy = top + H * ch + 8;
      s.appendChild(svgEl('text', {x: cx, y: cy, 'text-anchor': 'end', transform: `rotate(-60 ${cx} ${cy})`},
                          clip(shown(d.tokens[k].token), 10)));
    }
    box.appendChild(s);
    grid.appendChild(box);
  });
  app.appendChild(grid);
}

// Every head's whole pattern (queries down, keys across), the traced query marked in red.
function renderFullPatterns(app, d) {
  const first = d.layers.find(l => l.attn.heads.length);  // (a hybrid's linear-attention layers have none)
  if (!first || !first.attn.heads[0].full_pattern) return;
  section(app, 'Full attention patterns', 'Each head\u2019s [T\u00d7T] pattern: row = query, column = key; ' +
          'the traced query\u2019s row is marked in red.');
  const T = d.tokens.length, s = Math.max(1, Math.floor(150 / T)), size = T * s;
  d.layers.forEach(l => {
    if (!l.attn.heads.length) return;
    app.appendChild(el('h3', '', `Layer ${l.layer}`));
    const heads = el('div', 'heads');
    l.attn.heads.forEach(h => {
      const cell = el('div', 'head');
      const cv = document.createElement('canvas');
      cv.width = size; cv.height = size;
      cv.style.width = cv.style.height = Math.max(size, 150) + 'px';
      cv.style.imageRendering = 'pixelated';
      const g = cv.getContext('2d');
      g.fillStyle = '#ffffff'; g.fillRect(0, 0, size, size);
      h.full_pattern.forEach((rowv, q) => rowv.forEach((w, k) => {
        g.fillStyle = heat(Math.sqrt(w)); g.fillRect(k * s, q * s, s, s);
      }));
      g.strokeStyle = '#dc2626'; g.lineWidth = Math.max(1, s / 3);
      g.strokeRect(0, d.position * s, size, s);
      cell.appendChild(cv);
      cell.appendChild(el('div', '', `h${h.head}`));
      heads.appendChild(cell);
    });
    app.appendChild(heads);
  });
}

// -1..1 -> blue..white..red: a part against the target (blue) or toward it (red).
function diverge(v) {
  v = Math.max(-1, Math.min(1, v));
  return v >= 0 ? `hsl(0, 75%, ${98 - 50 * v}%)` : `hsl(222, 75%, ${98 + 50 * v}%)`;
}

// Direct logit attribution: each part's share of the target's logit (trace --attribute).
function renderAttribution(app, d) {
  const a = d.attribution;
  if (!a) return;
  const what = `${shown(a.target.token)} #${a.target.id}` + (a.contrast ? ` − ${shown(a.contrast.token)} #${a.contrast.id}` : '');
  section(app, 'Direct logit attribution', `How much each part wrote toward the logit${a.contrast ? ' difference' : ''} of ${what}, ` +
          `through the final ${a.norm === 'layernorm' ? 'LayerNorm' : 'RMSNorm'} frozen at its scale on the whole residual ` +
          `(${fix(a.scale, 5)}). Red: toward the target; blue: against it. Hover a cell for its value.`);
  const f = el('div', 'facts');
  const fact = (label, value) => { const x = el('div', '', label + ' '); x.appendChild(el('b', '', value)); f.appendChild(x); };
  fact('logit', fix(a.logit, 4));
  fact('sum of parts', fix(a.sum - a.bias_term, 4));
  if (a.norm === 'layernorm') fact('+ norm bias', fix(a.bias_term, 4));
  fact('|logit − sum|', Math.abs(a.logit - a.sum).toExponential(1));
  app.appendChild(f);
  const H = Math.max(0, ...a.layers.map(l => l.heads.length));  // a hybrid's layers differ (delta heads)
  let max = Math.abs(a.embedding.token) + 1e-12;
  if (a.embedding.position !== null) max = Math.max(max, Math.abs(a.embedding.position));
  a.layers.forEach(l => { max = Math.max(max, Math.abs(l.attn), Math.abs(l.mlp), Math.abs(l.ple || 0), Math.abs(l.shared_expert || 0), ...l.heads.map(Math.abs)); });
  // Gemma 4: each layer's per-layer-input branch is a part of its own.
  const ple = a.layers.some(l => l.ple !== null && l.ple !== undefined);
  const shared = a.layers.some(l => l.shared_expert !== null && l.shared_expert !== undefined);  // Qwen3.5-MoE
  if (a.layers.some(l => l.out_scale !== null && l.out_scale !== undefined))
    app.appendChild(el('p', 'note', 'Each layer scales the residual stream by its output scale: every part is shown as it ' +
                       `arrives in the final residual, times the scales of its layer and the later ones (the embeddings: ×${fix(a.layers[0].carry, 4)}).`));
  // A mixture of experts: one column per choice (1st, 2nd, ... expert), each its weighted part.
  const K = Math.max(0, ...a.layers.map(l => l.experts ? l.experts.length : 0));
  const t = el('table', 'attr');
  const head = el('tr');
  ['layer'].concat(Array.from({length: H}, (_, h) => `h${h}`), ['bias', 'attn', 'mlp'], ple ? ['ple'] : [],
                   Array.from({length: K}, (_, j) => `expert ${j + 1}`), shared ? ['shared expert'] : []).forEach(x => head.appendChild(el('th', '', x)));
  t.appendChild(head);
  const cell = (tr, v, title) => {
    const td = el('td', 'num', fix(v, 2));
    td.style.background = diverge(v / max);
    td.title = `${title}: ${v}`;
    tr.appendChild(td);
  };
  const emb = el('tr');
  emb.appendChild(el('th', '', a.embedding.position !== null ? 'embed (token, position)' : 'embed (token)'));
  cell(emb, a.embedding.token, 'token embedding');
  if (a.embedding.position !== null) cell(emb, a.embedding.position, 'position embedding');
  t.appendChild(emb);
  a.layers.forEach(l => {
    const tr = el('tr');
    tr.appendChild(el('th', '', `L${l.layer}`));
    l.heads.forEach((v, h) => cell(tr, v, `layer ${l.layer} head ${h}`));
    for (let h = l.heads.length; h < H; ++h) tr.appendChild(el('td'));
    cell(tr, l.attn_bias, `layer ${l.layer} attention bias`);
    cell(tr, l.attn, `layer ${l.layer} attention (all heads + bias)`);
    cell(tr, l.mlp, `layer ${l.layer} MLP` + (l.experts ? ' (all experts)' : ''));
    if (ple) cell(tr, l.ple || 0, `layer ${l.layer} per-layer input`);
    (l.experts || []).forEach(e => {
      cell(tr, e.part, `layer ${l.layer} expert ${e.id} (router weight ${fix(e.weight, 4)})`);
      tr.lastChild.textContent = `#${e.id} ${fix(e.part, 2)}`;
      tr.lastChild.dataset.expert = e.id;
    });
    if (shared) {
      for (let j = (l.experts || []).length; j < K; ++j) tr.appendChild(el('td'));
      cell(tr, l.shared_expert || 0, `layer ${l.layer} shared expert`);
    }
    t.appendChild(tr);
  });
  app.appendChild(t);
}

// Every section, for the view of one position (d itself, or viewAt(d, p) with --pos all).
function renderAll(app, d) {
  app.replaceChildren();
  renderPrompt(app, d);
  renderPositionNote(app, d);    // trace_html_panels.cpp
  renderNorms(app, d);
  renderLens(app, d);
  renderExperts(app, d);
  renderSampling(app, d);        // trace_html_panels.cpp
  renderHeadGrid(app, d);        // trace_html_panels.cpp
  renderAttribution(app, d);
  renderTracedAttention(app, d);
  renderFullPatterns(app, d);
  renderProvenance(app, d);      // trace_html_panels.cpp
}

// Called at the end of the page's script, after trace_html_panels.cpp's part.
function main() {
  const d = JSON.parse(document.getElementById('trace-data').textContent);
  const app = document.getElementById('app');
  d.layers.forEach(l => l.attn.heads.forEach(h => { if (h.pattern_e4) h.pattern = h.pattern_e4.map(w => w / 1e4); }));
  showPosition(app, d, d.position);  // trace_html_panels.cpp
  applyFragment(app, d);
  if (document.body.dataset.status !== 'error') document.body.dataset.status = 'rendered';
}
)JS";

}  // namespace journey
